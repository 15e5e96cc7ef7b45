"""The per-user JSONL store: dedup, promotion, TTL, damaged lines, crashes, concurrency, privacy."""

import asyncio
import json
import logging
from datetime import timedelta

from bot.config.model import MemoryConfig
from bot.memory.file_repository import file_memory
from bot.memory.files import UserFiles
from bot.memory.model import ItemType, Layer, new_item


def reopen(memory, clock, **config):
    """A new process over the same files."""
    return file_memory(memory.repository.root, lambda: MemoryConfig(**config), clock)


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


HOWTO_Q = "How do I restart nginx on the Ubuntu box?"
HOWTO_A = "Run `sudo systemctl restart nginx` and check `systemctl status nginx`."


async def test_a_restated_fact_merges_instead_of_duplicating(memory):
    await memory.remember_exchange("u", "I prefer tea over coffee.", "Noted!", "turn:a:1")
    await memory.remember_exchange("u", "I prefer tea over coffee", "Yes, I know.", "turn:a:2")
    overview = await memory.overview("u")
    assert [f.content for f in overview.facts] == ["The user prefers tea over coffee."]
    assert overview.facts[0].confidence > 0.85
    assert overview.facts[0].source == "turn:a:2"


async def test_a_keyed_fact_is_replaced_when_its_value_changes(memory, clock):
    await memory.remember_exchange("u", "My server is at 10.0.0.5.", "Ok.", "t1")
    first_id = (await memory.overview("u")).facts[0].id
    clock.now += timedelta(days=3)
    await memory.remember_exchange("u", "My server is at 10.0.0.7 now.", "Ok.", "t2")
    (fact,) = (await memory.overview("u")).facts
    assert fact.id == first_id and "10.0.0.7" in fact.content
    assert fact.created_at < fact.updated_at == clock.now


async def test_a_repeated_exchange_is_promoted_to_procedural(memory, clock):
    user_dir = UserFiles(memory.repository.root, "u").directory
    for turn in range(3):
        await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, f"turn:a:{turn}")
        clock.now += timedelta(hours=1)
    overview = await memory.overview("u")
    assert overview.episodes == 0
    (howto,) = overview.facts
    assert howto.layer is Layer.PROCEDURAL and howto.type is ItemType.HOWTO
    assert howto.confidence >= 0.8 and howto.ttl_days is None
    assert not (user_dir / "episodic" / "2026-03-01.jsonl").exists()
    assert [line["id"] for line in lines_of(user_dir / "procedural.jsonl")] == [howto.id]
    reopened = await reopen(memory, clock).overview("u")
    assert [f.id for f in reopened.facts] == [howto.id] and reopened.episodes == 0


async def test_two_mentions_are_not_enough_for_promotion(memory):
    for turn in range(2):
        await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, f"turn:a:{turn}")
    overview = await memory.overview("u")
    assert overview.facts == [] and overview.episodes == 1


async def test_a_statement_said_three_times_stays_an_exchange_never_a_fact(memory, clock):
    for turn in range(3):
        said = "started a new series last night, already hooked on it"
        await memory.remember_exchange("u", said, "Nice, what is it about?", f"turn:a:{turn}")
        clock.now += timedelta(hours=1)
    overview = await memory.overview("u")
    assert overview.facts == [] and overview.episodes == 1


async def test_a_lower_promotion_threshold_promotes_at_the_next_start(memory, clock):
    await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, "t1")
    reopened = reopen(memory, clock, promotionMinConfidence=0.5)
    overview = await reopened.overview("u")
    assert [f.layer for f in overview.facts] == [Layer.PROCEDURAL] and overview.episodes == 0
    again = await reopen(memory, clock).overview("u")
    assert [f.layer for f in again.facts] == [Layer.PROCEDURAL] and again.episodes == 0


async def test_episodes_expire_after_a_configured_ttl_and_their_files_go(tmp_path, clock):
    memory = file_memory(tmp_path, lambda: MemoryConfig(episodicTtlDays=90), clock)
    await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, "t1")
    await memory.remember_exchange("u", "My name is Ada.", "Hi Ada!", "t1")
    day_file = UserFiles(memory.repository.root, "u").directory / "episodic" / "2026-03-01.jsonl"
    assert day_file.exists()
    clock.now += timedelta(days=91)
    assert (await memory.overview("u")).episodes == 0, "expired items are not shown"
    overview = await reopen(memory, clock, episodicTtlDays=90).overview("u")
    assert overview.episodes == 0 and [f.content for f in overview.facts] == [
        "The user's name is Ada."
    ]
    assert not day_file.exists()


async def test_by_default_what_was_said_in_spring_is_recalled_in_winter(memory, clock):
    await memory.remember_exchange(
        "u", "We adopted a grey rescue cat called Miso yesterday.", "Lovely news!", "t1"
    )
    clock.now += timedelta(days=300)
    recalled = await reopen(memory, clock).recall("u", "what is my cat called?")
    assert "Miso" in recalled


async def test_past_the_cap_the_oldest_episodes_go_from_memory_and_files(tmp_path, clock):
    memory = file_memory(tmp_path, lambda: MemoryConfig(maxEpisodes=100), clock)
    for day in range(101):
        said = f"Planted {day} tulip bulbs along the garden fence today, number {day}."
        await memory.remember_exchange("u", said, "Nice.", f"t{day}")
        clock.now += timedelta(days=1)
    assert (await memory.overview("u")).episodes == 90, "down to the cap less a tenth"
    kept = await reopen(memory, clock, maxEpisodes=100).live_items("u")
    numbers = sorted(int(item.content.split("number ")[1].split(".")[0]) for item in kept)
    assert numbers == list(range(11, 101)), "the oldest went, from the files too"


async def test_damaged_lines_are_skipped_with_a_warning_and_set_aside(memory, clock, caplog):
    await memory.remember_exchange("u", "My name is Ada. I live in Paris.", "Hi!", "t1")
    semantic = UserFiles(memory.repository.root, "u").directory / "semantic.jsonl"
    good = semantic.read_text().splitlines()
    semantic.write_text(f'{good[0]}\n{{"id": "broken", "lay\nnot json at all\n{good[1]}\n')
    with caplog.at_level(logging.WARNING):
        overview = await reopen(memory, clock).overview("u")
    assert len(overview.facts) == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("line 2 is damaged" in w for w in warnings)
    assert any("line 3 is damaged" in w for w in warnings)
    assert len(semantic.read_text().splitlines()) == 2, "the file is cleaned"
    aside = semantic.with_name("semantic.jsonl.damaged").read_text()
    assert "not json at all" in aside


async def test_an_item_of_a_retired_type_in_an_old_file_still_loads(memory, clock):
    """Earlier versions knew a `note` type; a file holding one loads it as a fact, whole."""
    episodes = UserFiles(memory.repository.root, "u").episode_path(clock.now)
    episodes.parent.mkdir(parents=True)
    old_line = {
        "id": "n1",
        "layer": "episodic",
        "type": "note",
        "title": "Boiler",
        "content": "The boiler service is booked for the ninth",
        "created_at": clock.now.isoformat(),
        "updated_at": clock.now.isoformat(),
    }
    episodes.write_text(json.dumps(old_line) + "\n")
    found = await memory.search("u", "boiler service")
    assert [(s.item.id, s.item.type) for s in found] == [("n1", ItemType.FACT)]
    assert not episodes.with_name(episodes.name + ".damaged").exists()


async def test_a_line_cut_by_a_power_cut_is_not_glued_to_the_next_append(memory, clock):
    await memory.remember_exchange("u", "My name is Ada.", "Hi!", "t1")
    semantic = UserFiles(memory.repository.root, "u").directory / "semantic.jsonl"
    semantic.write_text(semantic.read_text() + '{"id": "half-written", "layer": "sem')
    fresh = reopen(memory, clock)
    await fresh.remember_exchange("u", "I live in Paris.", "Nice!", "t2")
    await fresh.remember_exchange("u", "I prefer green tea.", "Noted.", "t3")
    overview = await reopen(memory, clock).overview("u")
    assert len(overview.facts) == 3
    for line in semantic.read_text().splitlines():
        json.loads(line)


async def test_a_promotion_cut_short_keeps_one_item(memory, clock):
    await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, "t1")
    files = UserFiles(memory.repository.root, "u")
    (episode,) = [i for i in (await memory.repository._items("u")) if i.layer is Layer.EPISODIC]
    promoted = episode.model_copy(update={"layer": Layer.PROCEDURAL, "type": ItemType.HOWTO})
    files.append([promoted])  # the crash came before the day file was rewritten
    overview = await reopen(memory, clock).overview("u")
    assert [f.id for f in overview.facts] == [episode.id] and overview.episodes == 0
    assert not files.episode_path(episode.created_at).exists()


async def test_two_turns_writing_at_once_both_land_whole(memory, clock):
    async def turn(n):
        await memory.remember_exchange(
            "u", f"My project {n} is called Orion-{n}. Remember that.", "Sure.", f"turn:{n}"
        )

    await asyncio.gather(*(turn(n) for n in range(20)))
    await asyncio.gather(
        *(
            memory.remember_in_background("u", f"I like sport number {n}", "Ok!", "bg")
            for n in range(10)
        )
    )
    await memory.drain()
    overview = await reopen(memory, clock).overview("u")
    assert len(overview.facts) == 30
    for path in UserFiles(memory.repository.root, "u").all_files():
        for line in path.read_text().splitlines():
            json.loads(line)


async def test_one_users_items_never_reach_another_user(memory):
    await memory.remember_exchange("alice", "Remember that my server is at 10.0.0.5.", "Ok", "t")
    assert "10.0.0.5" in await memory.recall("alice", "where is my server?")
    assert await memory.recall("bob", "where is my server?") == ""
    assert await memory.search("bob", "server") == []
    alice_item = (await memory.overview("alice")).facts[0]
    assert await memory.forget("bob", alice_item.id) is None
    assert (await memory.overview("alice")).facts == [alice_item]


async def test_user_ids_cannot_escape_the_memory_folder(memory):
    await memory.remember_exchange("../../etc", "My name is Eve.", "Hi", "t")
    await memory.remember_exchange("..", "My name is Mallory.", "Hi", "t")
    written = [p for p in memory.repository.root.parent.rglob("*.jsonl")]
    assert written and all(memory.repository.root in p.parents for p in written)
    assert len({p.parent for p in written}) == 2


async def test_forget_one_item_and_then_everything(memory, clock):
    await memory.remember_exchange("u", "My name is Ada. I live in Paris.", "Hi Ada!", "t1")
    await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, "t2")
    name = next(f for f in (await memory.overview("u")).facts if "Ada" in f.content)
    assert (await memory.forget("u", name.id)).id == name.id
    reopened = reopen(memory, clock)
    assert [f.content for f in (await reopened.overview("u")).facts] == ["The user lives in Paris."]
    assert await reopened.forget_user("u") == 2
    assert not UserFiles(memory.repository.root, "u").directory.exists()
    assert await reopened.count_for("u") == 0
    assert await reopened.recall("u", "Paris") == ""


async def test_forget_all_waits_for_the_users_exchange_still_being_stored(memory):
    memory.remember_in_background("u", "My name is Marta.", "Nice to meet you, Marta!", "t1")
    assert await memory.forget_user("u") >= 1
    await memory.drain()
    assert await memory.count_for("u") == 0, "said just before /forget all, forgotten too"


async def test_a_forgotten_promoted_item_does_not_come_back(memory, clock):
    await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, "t1")
    files = UserFiles(memory.repository.root, "u")
    (episode,) = [i for i in (await memory.repository._items("u")) if i.layer is Layer.EPISODIC]
    for turn in range(2):
        await memory.remember_exchange("u", HOWTO_Q, HOWTO_A, f"t{turn + 2}")
    files.append([episode])  # the old episodic line, as if the promotion's clean-up had failed
    await memory.forget("u", episode.id)
    assert await reopen(memory, clock).count_for("u") == 0


async def test_a_fact_the_tool_stored_merges_with_the_same_fact_extracted_later(memory, clock):
    said = "The user's server is at 10.0.0.5."
    by_tool = new_item(ItemType.FACT, said, source="tool", confidence=0.95)
    await memory.add("u", [by_tool])
    await memory.remember_exchange("u", "Remember that my server is at 10.0.0.5.", "Ok", "t1")
    (fact,) = (await memory.overview("u")).facts
    assert fact.id == by_tool.id
    clock.now += timedelta(days=1)
    await memory.remember_exchange("u", "My server is at 10.0.0.9 now.", "Ok", "t2")
    (fact,) = (await memory.overview("u")).facts
    assert fact.id == by_tool.id and "10.0.0.9" in fact.content


async def test_nearest_offers_facts_sharing_no_word_and_never_episodes(memory):
    await memory.remember_exchange("u", "I live in Porto.", "Nice city, lots of bridges.", "t1")
    await memory.remember_exchange("u", "My dog is called Rex", "What a good name for a dog!", "t2")
    nearest = await memory.nearest("u", "I moved to Berlin last month", limit=5)
    contents = [item.content for item in nearest]
    assert "The user lives in Porto." in contents
    assert all(item.layer is not Layer.EPISODIC for item in nearest)
    by_word = await memory.nearest("u", "Rex is sick", limit=1)
    assert [item.content for item in by_word] == ["The user's dog is called Rex."]
    assert await memory.nearest("someone else", "Porto", limit=5) == []


async def test_replace_keeps_the_id_and_survives_a_restart(memory, clock):
    await memory.remember_exchange("u", "I live in Porto.", "Ok.", "t1")
    (home,) = (await memory.overview("u")).facts
    clock.now += timedelta(days=2)
    moved = await memory.replace("u", home.id, ItemType.IDENTITY, "The user lives in Berlin.")
    assert moved is not None and moved.id == home.id
    assert moved.updated_at == clock.now and moved.created_at == home.created_at
    (kept,) = (await reopen(memory, clock).overview("u")).facts
    assert kept.content == "The user lives in Berlin." and kept.title == kept.content
    assert await memory.search("u", "Porto") == []
    # The slot is kept: the rules' next "I live in …" updates this same item.
    await memory.remember_exchange("u", "I live in Lisbon.", "Ok.", "t2")
    (again,) = (await memory.overview("u")).facts
    assert again.id == home.id and "Lisbon" in again.content


async def test_replace_moves_an_item_to_its_new_layers_file(memory, clock):
    (note,) = await memory.add(
        "u", [new_item(ItemType.FACT, "Deploys go through CI.", source="t", confidence=0.9)]
    )
    await memory.replace("u", note.id, ItemType.HOWTO, "To deploy, run `make ship`.")
    user_dir = UserFiles(memory.repository.root, "u").directory
    assert not (user_dir / "semantic.jsonl").exists()
    assert [line["id"] for line in lines_of(user_dir / "procedural.jsonl")] == [note.id]
    (howto,) = (await reopen(memory, clock).overview("u")).facts
    assert howto.layer is Layer.PROCEDURAL and howto.type is ItemType.HOWTO


async def test_replace_of_an_unknown_item_changes_nothing(memory):
    assert await memory.replace("u", "nope", ItemType.FACT, "Anything.") is None
    assert await memory.count_for("u") == 0
