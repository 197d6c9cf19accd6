/**
 * Images attached to the next prompt: pasted into the input (Ctrl+V of a
 * screenshot) or dropped on it (files from the desktop). Each becomes a
 * chip under the input (a thumbnail, from a `data:` URL as the view's
 * Content-Security-Policy allows; name and size; × removes it; once the
 * thumbnail decoded, the chip's `data-thumb` is its `WIDTHxHEIGHT`) and goes with the next
 * `send` as `images: [{data, name}]` (base64). Only `image/*` files are
 * taken; the server checks the bytes again and refuses what is no image.
 * At most 20 (the contract's cap); the list empties when the prompt is sent.
 */
import type { ImageArg } from '../src/contract';
import { button, el } from './cards';

const MAX_IMAGES = 20;

export class Attachments {
  private images: { arg: ImageArg; size: number; type: string }[] = [];

  constructor(
    input: HTMLTextAreaElement,
    private readonly chips: HTMLElement,
  ) {
    input.addEventListener('paste', (event) => {
      const files = [...(event.clipboardData?.files ?? [])].filter(isImage);
      if (files.length === 0) return; // text: the textarea pastes it
      event.preventDefault();
      void this.add(files);
    });
    input.addEventListener('dragover', (event) => {
      if ([...(event.dataTransfer?.items ?? [])].some((item) => item.kind === 'file')) event.preventDefault();
    });
    input.addEventListener('drop', (event) => {
      const files = [...(event.dataTransfer?.files ?? [])].filter(isImage);
      if (files.length === 0) return;
      event.preventDefault();
      void this.add(files);
    });
    this.render();
  }

  get count(): number {
    return this.images.length;
  }

  /** The images for the prompt being sent; the list empties. */
  take(): ImageArg[] {
    const taken = this.images.map((image) => image.arg);
    this.images = [];
    this.render();
    return taken;
  }

  private async add(files: File[]): Promise<void> {
    for (const [index, file] of files.entries()) {
      if (this.images.length >= MAX_IMAGES) break;
      const name = file.name && file.name !== 'image.png' ? file.name : `pasted-${this.images.length + index + 1}.png`;
      this.images.push({ arg: { data: await base64(file), name }, size: file.size, type: file.type });
    }
    this.render();
  }

  private render(): void {
    this.chips.replaceChildren(
      ...this.images.map((image, index) => {
        const remove = button('×', () => {
          this.images.splice(index, 1);
          this.render();
        });
        remove.title = 'Remove this image';
        const chip = el('span', 'image-chip');
        const thumb = el('img', 'thumb');
        thumb.alt = '';
        thumb.addEventListener('load', () => (chip.dataset.thumb = `${thumb.naturalWidth}x${thumb.naturalHeight}`));
        thumb.src = `data:${image.type};base64,${image.arg.data}`;
        chip.append(thumb, el('span', 'label', `image ${image.arg.name} (${kilobytes(image.size)})`), remove);
        return chip;
      }),
    );
    this.chips.hidden = this.images.length === 0;
  }
}

function isImage(file: File): boolean {
  return file.type.startsWith('image/');
}

function kilobytes(size: number): string {
  return size < 1024 ? `${size} B` : `${Math.round(size / 1024)} KB`;
}

async function base64(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let start = 0; start < bytes.length; start += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(start, start + 0x8000));
  }
  return btoa(binary);
}
