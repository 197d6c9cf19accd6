"""FrameDecoder: every frame a client may write comes out whole, however the
stream is cut; every frame nobody can delimit is a FrameError at once, after
the frames before it came out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rhema_lsp.server.framing import MAX_HEADERS, FrameDecoder, FrameError


def decode(*chunks: bytes) -> list[bytes]:
    decoder = FrameDecoder()
    bodies = []
    for chunk in chunks:
        decoder.feed(chunk)
        while (body := decoder.frame()) is not None:
            bodies.append(body)
    decoder.close()
    return bodies


def test_the_headers_clients_write_are_read_in_any_case_and_line_end() -> None:
    stream = (
        b"Content-Length: 2\r\n\r\n{}"
        b"content-length: 3\r\n\r\n[1]"
        b"CONTENT-LENGTH:4\n\n[12]"
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 1\r\n\r\n5"
        b"X-Custom: whatever\nContent-Length:\t0\n\r\n"
        b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"
    )

    assert decode(stream) == [b"{}", b"[1]", b"[12]", b"5", b"", b"{}"]
    assert decode(*[stream[i : i + 1] for i in range(len(stream))]) == decode(stream)


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        (b'{"jsonrpc": "2.0"}', "garbage"),
        (b"Content Length: 5\r\n\r\n", "garbage"),
        (b"Content-Length 5\r\n\r\n", "garbage"),
        (b"\r\n", "an empty line without Content-Length"),
        (b"Content-Type: x\r\n\r\n", "without Content-Length"),
        (b"Content-Length: -5\r\n\r\n", "'-5' is not a number"),
        (b"Content-Length: 5x\r\n\r\n", "not a number"),
        (b"Content-Length: \r\n\r\n", "not a number"),
        (b"Content-Length: 1e3\r\n\r\n", "not a number"),
        (b"Content-Length: 999999999999\r\n\r\n", "over the"),
        (b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n", "over the"),
        (b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n", "two Content-Length"),
        (b"X-Long: " + b"a" * MAX_HEADERS, "longer than"),
    ],
)
def test_a_frame_nobody_can_delimit_is_an_error_at_once(stream: bytes, words: str) -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 2\r\n\r\n{}" + stream)

    assert decoder.frame() == b"{}"  # the frame before it is served
    with pytest.raises(FrameError, match=words):
        decoder.frame()


def test_bare_json_is_an_error_at_its_first_byte_without_waiting_for_a_line_end() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"{")

    with pytest.raises(FrameError, match="garbage"):
        decoder.frame()


@pytest.mark.parametrize(
    ("stream", "words"),
    [
        (b"Content-Length: 10\r\n\r\n{}", "2 bytes into a body of 10"),
        (b"Content-Length: 10\r\n", "inside a header block"),
    ],
)
def test_a_stream_that_ends_inside_a_frame_is_an_error(stream: bytes, words: str) -> None:
    decoder = FrameDecoder()
    decoder.feed(stream)

    assert decoder.frame() is None
    with pytest.raises(FrameError, match=words):
        decoder.close()


def test_a_body_is_bytes_counted_not_characters() -> None:
    text = '{"é": "日本"}'.encode()

    assert decode(b"Content-Length: %d\r\n\r\n" % len(text) + text) == [text]


# -- generated streams ----------------------------------------------------------------

header_names = st.sampled_from(
    ["Content-Length", "content-length", "CONTENT-LENGTH", "cOnTeNt-LeNgTh"]
)
line_ends = st.sampled_from([b"\r\n", b"\n"])
extra_headers = st.lists(
    st.sampled_from(
        [
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8",
            b"X-Trace: 1",
            b"content-type:x",
        ]
    ),
    max_size=2,
)


@st.composite
def frames(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A frame as some client writes it, and its body."""
    payload = draw(st.binary(max_size=64))
    end = draw(line_ends)
    headers = [*draw(extra_headers), draw(header_names).encode() + b": %d" % len(payload)]
    order = draw(st.permutations(headers))
    return b"".join(line + draw(line_ends) for line in order) + end + payload, payload


bad_frames = st.sampled_from(
    [
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: x\r\n\r\n",
        b"\r\n",
        b"Garbage\r\n\r\n",
        b"[1, 2]",
        b"Content-Length 3\r\n\r\n",
        b"Content-Type: a\n\n",
    ]
)


@given(
    good=st.lists(frames(), max_size=6),
    bad=st.none() | bad_frames,
    cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=30),
)
def test_any_stream_cut_anywhere_gives_its_frames_then_stops_at_a_bad_one(
    good: list[tuple[bytes, bytes]], bad: bytes | None, cuts: list[int]
) -> None:
    stream = b"".join(frame for frame, _ in good) + (bad or b"")
    chunks, at = [], 0
    for size in cuts:
        chunks.append(stream[at : at + size])
        at += size
    chunks.append(stream[at:])
    decoder = FrameDecoder()
    bodies: list[bytes] = []
    failed = False
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            while (body := decoder.frame()) is not None:
                bodies.append(body)
        decoder.close()
    except FrameError:
        failed = True

    assert bodies == [payload for _, payload in good]
    assert failed == (bad is not None)
