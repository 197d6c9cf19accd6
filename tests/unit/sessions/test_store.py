import os
import sqlite3
from pathlib import Path

import pytest

import rhema_lsp.sessions as sessions_api
from rhema_lsp.engine import (
    Agent,
    Message,
    Role,
    Session,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolContext,
    ToolResult,
    run_turn,
)
from rhema_lsp.sessions import (
    SessionConflictError,
    SessionStore,
    SessionStoreError,
    UnknownSessionError,
    title_from_prompt,
)
from rhema_lsp.sessions.schema import SCHEMA_VERSION, migrate
from tests.unit.sessions.scripted import NullSink, ScriptedProvider, SideEffectResolver


def rich_history() -> list[Message]:
    return [
        Message.user("fix the bug in main.py"),
        Message(
            role=Role.ASSISTANT,
            content=[
                ThinkingPart(text="look first", signature="sig", provider_data={"k": [1, 2]}),
                TextPart(text="reading"),
                ToolCall(id="c1", name="read", args={"key": "é"}, raw_args='{"key": "é"}'),
            ],
        ),
        Message(role=Role.TOOL, content=[ToolResult.failure("c1", "nope", code=2)]),
        Message.assistant("done"),
    ]


def real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def stored_rows(path: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT session_id, seq FROM messages ORDER BY session_id, seq"
        ).fetchall()


def test_public_surface_is_exactly_what_is_meant() -> None:
    assert set(sessions_api.__all__) == {
        "DEFAULT_LEASE_TTL",
        "Checkpoints",
        "FileChange",
        "Lease",
        "Restore",
        "SessionBusyError",
        "SessionChoices",
        "SessionConflictError",
        "SessionInfo",
        "SessionStore",
        "SessionStoreError",
        "StoreEvent",
        "StoreLocation",
        "StoredChoices",
        "TurnStart",
        "TurnSummary",
        "UnknownSessionError",
        "content_hash",
        "referenced",
        "title_from_prompt",
    }


async def test_workspace_store_lives_in_a_self_ignoring_rhema_folder(
    store: SessionStore, folder: Path
) -> None:
    assert store.path == real(folder) / ".rhema" / "sessions.sqlite3"
    assert (folder / ".rhema" / ".gitignore").read_text() == "*\n"
    assert store.notice is None
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_user_store_is_keyed_by_the_real_path_of_the_folder(tmp_path: Path) -> None:
    state = tmp_path / "state"
    one, two = tmp_path / "a" / "proj", tmp_path / "b" / "proj"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(one)
    paths = []
    for folder in (one, two, link):
        store = await SessionStore.open(folder, location="user", state_dir=state)
        paths.append(store.path)
        await store.close()
    assert paths[0] != paths[1]
    assert paths[0] == paths[2]
    assert all(path.parent == state / "sessions" for path in paths)
    assert paths[0].name.startswith("proj-")
    assert not (one / ".rhema").exists()


async def test_a_missing_folder_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(SessionStoreError, match="not a folder"):
        await SessionStore.open(tmp_path / "absent")


async def test_create_list_and_info(store: SessionStore, folder: Path) -> None:
    first = await store.create("  \n  explain   this\nfunction please", model="m1")
    second = await store.create("x" * 200)
    assert first.title == "explain this"
    assert len(second.title) <= 80
    assert second.title.endswith("…")
    assert first.folder == str(folder)
    assert (first.turns, first.model, first.running) == (0, "m1", False)
    assert first.created_at.endswith("Z")
    assert [info.id for info in await store.list()] == [second.id, first.id]
    assert await store.turn_numbers.reserve(first.id) == 1
    await store.record_turn(first.id, 1, model="m2")
    listed = await store.list()
    assert [info.id for info in listed] == [first.id, second.id]
    assert (listed[0].turns, listed[0].model) == (1, "m2")
    assert await store.turn_numbers.reserve(first.id) == 2
    await store.record_turn(first.id, 2)
    info = await store.info(first.id)
    assert (info.turns, info.model) == (2, "m2")
    assert info.updated_at > first.updated_at


async def test_unknown_sessions_are_named_in_the_error(store: SessionStore, folder: Path) -> None:
    for call in (store.info, store.load, store.record_turn):
        with pytest.raises(UnknownSessionError, match=f"no session nope in {folder}"):
            await call("nope")
    with pytest.raises(UnknownSessionError):
        await store.commit("nope", Session(history=[Message.user("x")]))


async def test_commit_round_trips_every_part_and_appends_only_new_rows(
    store: SessionStore, folder: Path
) -> None:
    info = await store.create("p")
    session = Session(history=rich_history()[:2])
    await store.commit(info.id, session)
    assert stored_rows(store.path) == [(info.id, 0), (info.id, 1)]
    session.history.extend(rich_history()[2:])
    await store.commit(info.id, session, durable=False)
    await store.commit(info.id, session)  # nothing new: no-op
    assert stored_rows(store.path) == [(info.id, seq) for seq in range(4)]
    other = await SessionStore.open(folder)
    assert (await other.load(info.id)).history == rich_history()
    await other.close()


async def test_commit_reports_its_persistence_points_in_order(folder: Path) -> None:
    seen: list[str] = []
    store = await SessionStore.open(folder, on_event=seen.append)
    info = await store.create("p")
    await store.commit(info.id, Session(history=[Message.user("a")]))
    await store.close()
    assert seen == ["commit.begin", "commit.written", "commit.done"]


async def test_a_turn_through_the_commit_hook_is_stored_whole(
    store: SessionStore, tmp_path: Path
) -> None:
    info = await store.create("go")
    resolver = SideEffectResolver(tmp_path / "side.log")
    hook = store.commit_hook(info.id)
    seen_at_first_tool: list[int] = []

    async def counting_hook(current: Session) -> None:
        await hook(current)
        seen_at_first_tool.append(len(stored_rows(store.path)))

    agent = Agent(ScriptedProvider(), resolver=resolver, commit_hook=counting_hook)
    session = Session()
    await run_turn(agent, session, Message.user("go"), NullSink(), ToolContext(), max_steps=5)
    await store.commit(info.id, session, durable=False)
    assert (await store.load(info.id)).history == session.history
    # each commit-before-execute stored everything up to the tool-use message
    assert seen_at_first_tool == [2, 5]


async def test_a_second_window_appending_is_a_conflict_not_a_corruption(
    store: SessionStore, folder: Path
) -> None:
    info = await store.create("p")
    await store.commit(info.id, Session(history=[Message.user("a")]))
    other = await SessionStore.open(folder)
    mine, theirs = await store.load(info.id), await other.load(info.id)
    theirs.history.append(Message.assistant("theirs"))
    await other.commit(info.id, theirs)
    mine.history.append(Message.assistant("mine"))
    with pytest.raises(SessionConflictError, match=r"changed on disk.*Reopen"):
        await store.commit(info.id, mine)
    assert (await other.load(info.id)).history == theirs.history
    await other.close()


async def test_a_store_that_never_loaded_the_session_checks_the_stored_tail(
    store: SessionStore, folder: Path
) -> None:
    info = await store.create("p")
    base = [Message.user("a"), Message.assistant("b")]
    await store.commit(info.id, Session(history=base))
    fresh = await SessionStore.open(folder)
    with pytest.raises(SessionConflictError, match="differs"):
        await fresh.commit(
            info.id, Session(history=[Message.user("a"), Message.assistant("X"), Message.user("c")])
        )
    with pytest.raises(SessionConflictError, match="this copy has 1"):
        await fresh.commit(info.id, Session(history=base[:1]))
    await fresh.commit(info.id, Session(history=[*base, Message.user("c")]))
    assert len((await fresh.load(info.id)).history) == 3
    await fresh.close()


async def test_delete_removes_the_session_and_its_messages(store: SessionStore) -> None:
    info = await store.create("p")
    await store.commit(info.id, Session(history=rich_history()))
    assert await store.delete(info.id) is True
    assert await store.delete(info.id) is False
    assert stored_rows(store.path) == []
    assert await store.list() == []


async def test_an_unreadable_message_row_is_reported_with_what_to_do(store: SessionStore) -> None:
    info = await store.create("p")
    await store.commit(info.id, Session(history=rich_history()))
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE messages SET body = '{\"role\": 7}' WHERE seq = 2")
    with pytest.raises(SessionStoreError, match=r"message 2 of session .* cannot be read.*delete"):
        await store.load(info.id)


async def test_an_old_schema_is_migrated_forward_keeping_its_sessions(folder: Path) -> None:
    path = folder / ".rhema" / "sessions.sqlite3"
    path.parent.mkdir()
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, target=1) == 0
    conn.execute(
        "INSERT INTO sessions VALUES ('old', ?, 'old one', '2020-01-01T00:00:00.000000Z', "
        "'2020-01-01T00:00:00.000000Z', 'm', 3)",
        (str(folder),),
    )
    conn.execute(
        "INSERT INTO messages VALUES ('old', 0, ?)", (Message.user("hi").model_dump_json(),)
    )
    conn.close()
    store = await SessionStore.open(folder)
    assert store.notice is None
    assert [(i.id, i.turns) for i in await store.list()] == [("old", 3)]
    assert (await store.load("old")).history == [Message.user("hi")]
    async with store.lease("old"):
        assert (await store.info("old")).running
    await store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


async def test_a_store_from_a_newer_version_is_refused_not_moved(folder: Path) -> None:
    store = await SessionStore.open(folder)
    path = store.path
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(SessionStoreError, match=r"newer.*upgrade rhema-lsp"):
        await SessionStore.open(folder)
    assert path.exists()
    assert list(path.parent.glob("*.corrupt-*")) == []


async def test_a_closed_store_says_so(store: SessionStore) -> None:
    await store.close()
    with pytest.raises(SessionStoreError, match="closed"):
        await store.list()


@pytest.mark.parametrize(
    ("prompt", "title"),
    [
        ("fix it", "fix it"),
        ("\n\n  two\tspaces  \nnext", "two spaces"),
        ("", "Untitled session"),
        ("   \n ", "Untitled session"),
        ("word " * 30, ("word " * 16).strip() + "…"),
        ("x" * 100, "x" * 79 + "…"),
    ],
)
def test_titles_are_the_first_line_cut_to_eighty_characters(prompt: str, title: str) -> None:
    assert title_from_prompt(prompt) == title
    assert len(title_from_prompt(prompt)) <= 80


async def test_create_takes_the_id_a_front_door_handed_out(store: SessionStore) -> None:
    info = await store.create("first prompt", session_id="acp-0001")

    assert info.id == "acp-0001"
    assert (await store.info("acp-0001")).title == "first prompt"
    with pytest.raises(SessionStoreError):
        await store.create("again", session_id="acp-0001")
