// Drive a running code-server in headless /usr/bin/chromium, one scenario per call.
//
// Usage: node drive.mjs SCENARIO.json   -> prints one JSON line {ok, steps, error?}
// Scenario: {url, browserDataDir, logsDir, timeoutMs?, steps: [...]}, each step one of
//   {command: "Rhema: Ask", keepFocus?: true} F1, type the title, pick that row (first clicks
//                                            the workbench, unless keepFocus: that would
//                                            collapse an editor selection)
//   {input: "text", title: "Rhema: Ask"}     answer an input box (waits for its title)
//   {waitLog: "Rhema", contains: "...", not?: "..."}  poll <logsDir>/**/N-Rhema.log
//   {openFile: "hello.py"}                   quick open a workspace file and focus its editor
//   {press: "Control+End"}  {typeText: "..."}  keyboard input to whatever has focus
//   {click: "css", hasText?: "..."}           click the first matching element
//   {clickEditor: true}                      focus the active text editor
//   {pickAction: "label"}                    choose a row of the open code action menu by keyboard
//                                            (a pointer block covers it against stray clicks)
//   {openActions: "label", select: ["Shift+End"], via: "Control+." | {command: "Refactor..."}}
//                                            press the `select` keys, open the code action menu and
//                                            wait for the row; if the server had not answered yet
//                                            ("No code actions available"), Escape, select again, retry
//   {waitFile: "/abs/path", contains|equals: "..."} poll a file on disk until it matches
//   {screenshot: "/path.png"}
//   {query: "css", hasText?: "..."}          every matching element: {text, classes, checked
//                                            (a checkbox's state, else aria-checked), label}
//   {waitFor: "css", hasText?: "...", state?: "visible"|"hidden"}  wait for an element
//   {dump: "css", file: "/path.html"}        write the first match's outerHTML (debugging)
//   {sleepMs: 200}
//   {waitStatus: "Rhema", not: ["starting", "stopped"]}  wait for the status bar item with that text
//                                            until it contains none of `not` (the server is running)
//   {exec: ["prog", "arg", ...]}             run a program to completion (fails on a non-zero exit)
//   {get: "http://127.0.0.1:PORT/path"}      an HTTP GET from the driver (fails unless it answers 2xx)
//   {selectOption: "css", hasText: "..."}    pick the first <option> of a <select> whose text has hasText
//   {resizeSideBar: 700}                     drag the primary side bar's edge until it is that wide (px)
//   {typeText: "...", delayMs: 40}           (with delayMs) type one key at a time, that far apart
// `in: "chat"` on click, waitFor, query, dump and selectOption looks inside the Rhema chat view
// (a webview: two nested iframes) instead of the workbench; query then also reports each element's
// `open` (a <details>), `value` (an input), `data` (its data-* attributes), `scroll`
// ({top, height, client, width, clientWidth}) and `box` (its client rect: {x, y, width, height}).
// One result per step, in order. The Output panel renders only visible lines, so channel text is read from the log
// file the extension host writes, not from the DOM.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const scenario = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const timeout = scenario.timeoutMs ?? 60_000;

function findLogs(dir, suffix, found = []) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return found;
  }
  for (const name of entries) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) findLogs(path, suffix, found);
    else if (name.endsWith(suffix) && path.includes('output_logging_')) found.push(path);
  }
  return found;
}

function channelText(name) {
  return findLogs(scenario.logsDir, `-${name}.log`)
    .map((path) => readFileSync(path, 'utf8'))
    .join('');
}

async function waitFor(predicate, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForAsync(predicate, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const launched = Date.now();
let startupMs;
const context = await chromium.launchPersistentContext(scenario.browserDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  viewport: { width: 1400, height: 900 },
});
const results = [];
let failure;
let page;
let stepStart = Date.now();
try {
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(timeout);
  await page.goto(scenario.url);
  await page.waitForSelector('.monaco-workbench');
  // The extension's status bar item appears once it has activated (onStartupFinished):
  // only then does the palette list its commands.
  await page.locator('.statusbar-item', { hasText: 'Rhema' }).first().waitFor({ state: 'visible' });
  startupMs = Date.now() - launched;
  const widget = page.locator('.quick-input-widget');
  const tryCommand = async (title, keepFocus, wait) => {
    if (!keepFocus) await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 }, timeout: wait });
    await page.keyboard.press('F1');
    await widget.waitFor({ state: 'visible', timeout: wait });
    await widget.locator('input').fill(`>${title}`, { timeout: wait });
    // Pick the row whose label is exactly the title: Enter would take the first fuzzy
    // match, which may be a recently used neighbour ("File: Save All").
    const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    const row = widget
      .locator('.monaco-list-row')
      .filter({ visible: true })
      .filter({ has: page.locator('.label-name', { hasText: exact }) })
      .first();
    await row.waitFor({ state: 'visible', timeout: wait });
    await row.click({ timeout: wait });
  };
  // The palette can close or re-render under the pointer while the workbench is busy
  // (an editor the turn opened takes the focus, the list refilters): a try that did not
  // click closes what is left of it and asks again, twice at most.
  const runCommand = async (title, keepFocus) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await tryCommand(title, keepFocus, attempt < 3 ? Math.min(timeout, 15000) : timeout);
        return;
      } catch (error) {
        if (attempt === 3) throw error;
        if (await widget.isVisible()) await page.keyboard.press('Escape');
      }
    }
  };
  // The chat view's document: the webview host iframe, then its active frame.
  const scope = (step) =>
    step.in === 'chat'
      ? page.locator('iframe.webview.ready').first().contentFrame().locator('iframe#active-frame').contentFrame()
      : page;
  const actionRow = (label) => page.locator(`.action-widget .monaco-list-row[aria-label="${label}"]`).first();
  for (const step of scenario.steps) {
    stepStart = Date.now();
    if (step.command !== undefined) {
      await runCommand(step.command, step.keepFocus);
      results.push({ command: step.command });
    } else if (step.input !== undefined) {
      await widget.locator('.quick-input-title', { hasText: step.title }).waitFor({ state: 'visible' });
      await page.keyboard.type(step.input);
      await page.keyboard.press('Enter');
      await widget.locator('.quick-input-title', { hasText: step.title }).waitFor({ state: 'hidden' });
      results.push({ input: step.input });
    } else if (step.waitLog !== undefined) {
      const text = await waitFor(() => {
        const current = channelText(step.waitLog);
        return current.includes(step.contains) ? current : '';
      }, `"${step.contains}" in the ${step.waitLog} channel`);
      results.push({ waitLog: step.waitLog, text });
    } else if (step.openFile !== undefined) {
      await page.keyboard.press('F1');
      await widget.waitFor({ state: 'visible' });
      await widget.locator('input').fill(step.openFile);
      await widget.locator('.monaco-list-row', { hasText: step.openFile }).first().waitFor({ state: 'visible' });
      await page.keyboard.press('Enter');
      await page.locator('.tab.active', { hasText: step.openFile }).waitFor({ state: 'visible' });
      await page.locator('.editor-instance .monaco-editor.focused').waitFor({ state: 'visible' });
      results.push({ openFile: step.openFile });
    } else if (step.click !== undefined) {
      const target = scope(step).locator(step.click, step.hasText ? { hasText: step.hasText } : {}).first();
      await target.click();
      results.push({ click: step.click });
    } else if (step.press !== undefined) {
      await page.keyboard.press(step.press);
      results.push({ press: step.press });
    } else if (step.typeText !== undefined) {
      await page.keyboard.type(step.typeText, step.delayMs ? { delay: step.delayMs } : {});
      results.push({ typeText: step.typeText });
    } else if (step.resizeSideBar !== undefined) {
      const box = await page.locator('.part.sidebar').first().boundingBox();
      if (box === null) throw new Error('no side bar to resize');
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width - 1, y);
      await page.mouse.down();
      await page.mouse.move(box.x + step.resizeSideBar, y, { steps: 8 });
      await page.mouse.up();
      const after = await page.locator('.part.sidebar').first().boundingBox();
      results.push({ resizeSideBar: step.resizeSideBar, width: after?.width });
    } else if (step.openActions !== undefined) {
      // VS Code asks for code actions once per selection change; an answer that came
      // before the server had the document is not asked again, so select anew and retry.
      const deadline = Date.now() + timeout;
      let attempts = 0;
      for (;;) {
        attempts += 1;
        for (const key of step.select ?? []) await page.keyboard.press(key);
        if (typeof step.via === 'object') await runCommand(step.via.command, true);
        else await page.keyboard.press(step.via ?? 'Control+.');
        const shown = await actionRow(step.openActions)
          .waitFor({ state: 'visible', timeout: 5_000 })
          .then(() => true, () => false);
        if (shown) break;
        if (Date.now() > deadline) throw new Error(`no "${step.openActions}" code action after ${attempts} tries`);
        await page.keyboard.press('Escape');
        await page.keyboard.press('Home');
      }
      results.push({ openActions: step.openActions, attempts });
    } else if (step.pickAction !== undefined) {
      const row = actionRow(step.pickAction);
      await row.waitFor({ state: 'visible' });
      const rows = await page.locator('.action-widget .monaco-list-row').count();
      for (let i = 0; i <= rows && !(await row.evaluate((el) => el.classList.contains('focused'))); i++) {
        await page.keyboard.press('ArrowDown');
      }
      await page.keyboard.press('Enter');
      await row.waitFor({ state: 'hidden' });
      results.push({ pickAction: step.pickAction });
    } else if (step.clickEditor !== undefined) {
      await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
      await page.locator('.editor-instance .monaco-editor.focused').waitFor({ state: 'visible' });
      results.push({ clickEditor: true });
    } else if (step.waitFile !== undefined) {
      const text = await waitFor(() => {
        let current = '';
        try {
          current = readFileSync(step.waitFile, 'utf8');
        } catch {
          return '';
        }
        const matches = step.equals !== undefined ? current === step.equals : current.includes(step.contains);
        return matches ? current || ' ' : '';
      }, `${JSON.stringify(step.equals ?? step.contains)} in ${step.waitFile}`);
      results.push({ waitFile: step.waitFile, text });
    } else if (step.screenshot !== undefined) {
      await page.screenshot({ path: step.screenshot });
      results.push({ screenshot: step.screenshot });
    } else if (step.waitStatus !== undefined) {
      const item = page.locator('.statusbar-item', { hasText: step.waitStatus }).first();
      const unwanted = [step.not ?? []].flat();
      const text = await waitForAsync(async () => {
        const current = (await item.textContent()) ?? '';
        return current && !unwanted.some((word) => current.includes(word)) ? current : '';
      }, `the ${step.waitStatus} status item without ${JSON.stringify(unwanted)}`);
      results.push({ waitStatus: step.waitStatus, text });
    } else if (step.query !== undefined) {
      const found = scope(step).locator(step.query, step.hasText ? { hasText: step.hasText } : {});
      const elements = await found.evaluateAll((nodes) =>
        nodes.map((node) => ({
          text: node.textContent ?? '',
          classes: node.className?.toString() ?? '',
          checked: 'checked' in node ? node.checked : node.getAttribute('aria-checked') === 'true',
          label: node.getAttribute('aria-label'),
          open: 'open' in node ? node.open : null,
          value: 'value' in node ? node.value : null,
          data: { ...node.dataset },
          scroll: {
            top: node.scrollTop,
            height: node.scrollHeight,
            client: node.clientHeight,
            width: node.scrollWidth,
            clientWidth: node.clientWidth,
          },
          box: (({ x, y, width, height }) => ({ x, y, width, height }))(node.getBoundingClientRect()),
        })),
      );
      results.push({ query: step.query, hasText: step.hasText, elements });
    } else if (step.waitFor !== undefined) {
      const target = scope(step).locator(step.waitFor, step.hasText ? { hasText: step.hasText } : {}).first();
      await target.waitFor({ state: step.state ?? 'visible' });
      results.push({ waitFor: step.waitFor });
    } else if (step.dump !== undefined) {
      const html = await scope(step).locator(step.dump).first().evaluate((node) => node.outerHTML);
      writeFileSync(step.file, html);
      results.push({ dump: step.dump });
    } else if (step.exec !== undefined) {
      const [program, ...args] = step.exec;
      const stdout = execFileSync(program, args, { encoding: 'utf8' });
      results.push({ exec: program, stdout });
    } else if (step.get !== undefined) {
      const response = await fetch(step.get, { signal: AbortSignal.timeout(timeout) });
      if (!response.ok) throw new Error(`GET ${step.get} answered ${response.status}`);
      results.push({ get: step.get, text: await response.text() });
    } else if (step.selectOption !== undefined) {
      const select = scope(step).locator(step.selectOption).first();
      const option = select.locator('option', { hasText: step.hasText }).first();
      await option.waitFor({ state: 'attached' });
      await select.selectOption(await option.getAttribute('value'));
      results.push({ selectOption: step.selectOption });
    } else if (step.pasteImage !== undefined) {
      // A paste of an image file, as the clipboard hands it to the focused element
      // (or, with `drop: true`, the file dropped on it from the desktop).
      const data = readFileSync(step.pasteImage).toString('base64');
      await scope(step)
        .locator(step.into ?? '#input')
        .first()
        .evaluate(
          (node, { data, name, type, drop }) => {
            const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], name, { type }));
            const init = { bubbles: true, cancelable: true };
            node.dispatchEvent(
              drop
                ? new DragEvent('drop', { ...init, dataTransfer: transfer })
                : new ClipboardEvent('paste', { ...init, clipboardData: transfer }),
            );
          },
          { data, name: step.name ?? 'image.png', type: step.type ?? 'image/png', drop: step.drop === true },
        );
      results.push({ pasteImage: step.pasteImage });
    } else if (step.sleepMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, step.sleepMs));
      results.push({ sleepMs: step.sleepMs });
    } else {
      throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
    results[results.length - 1].ms = Date.now() - stepStart;
  }
  if (scenario.finalScreenshot) await page.screenshot({ path: scenario.finalScreenshot });
} catch (error) {
  failure = error instanceof Error ? error.stack ?? error.message : String(error);
  if (page !== undefined && scenario.failureScreenshot) {
    await page.screenshot({ path: scenario.failureScreenshot }).catch(() => undefined);
  }
} finally {
  await context.close();
}
process.stdout.write(`${JSON.stringify({ ok: failure === undefined, startupMs, steps: results, error: failure })}\n`);
process.exitCode = failure === undefined ? 0 : 1;
