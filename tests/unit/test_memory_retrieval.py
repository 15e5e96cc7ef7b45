"""Scoring, per-layer top-k, budgets and the high-score overflow rule."""

from datetime import UTC, datetime, timedelta

import numpy as np

from bot.config.model import MemoryConfig
from bot.memory.exchange_ranking import episode_choice
from bot.memory.model import ItemType, Layer, MemoryItem, ScoredItem, fingerprint
from bot.memory.packing import estimate_tokens, pack, prompt_line, render_line
from bot.memory.scoring import LEXICAL_FLOOR, SEMANTIC_POOL, fuse, rank, within_pools
from bot.memory.user_items import UserItems
from bot.memory.vectors import VectorIndex

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LAYER_OF = {
    ItemType.EXCHANGE: Layer.EPISODIC,
    ItemType.HOWTO: Layer.PROCEDURAL,
}


def item(content, kind=ItemType.FACT, age_days=0.0, confidence=0.85, salience=0.7, **extra):
    at = NOW - timedelta(days=age_days)
    return MemoryItem(
        layer=LAYER_OF.get(kind, Layer.SEMANTIC),
        type=kind,
        title=content[:60],
        content=content,
        confidence=confidence,
        salience=salience,
        created_at=at,
        updated_at=at,
        fingerprint=fingerprint(kind, content),
        **extra,
    )


def items_of(*memory_items):
    items = UserItems()
    for memory_item in memory_items:
        items.put(memory_item)
    return items


def config(**fields):
    return MemoryConfig(**fields)


def contents(ranked):
    return [scored.item.content for scored in ranked]


def test_the_matching_fact_ranks_first_and_unrelated_facts_stay_out():
    items = items_of(
        item("The user's server is at 10.0.0.5."),
        item("The user prefers tea over coffee.", ItemType.PREFERENCE),
        item("To restart the VPN: sudo systemctl restart wg-quick@wg0", ItemType.HOWTO),
    )
    ranked = rank(items, "what is the address of my server?", NOW, config())
    assert contents(ranked) == ["The user's server is at 10.0.0.5."]


def test_a_word_match_too_weak_for_the_fusion_is_left_to_the_meaning_ranking():
    weak, strong = LEXICAL_FLOOR / 2, LEXICAL_FLOOR * 2
    fused = fuse({"lone-word": weak, "many-words": strong}, {"near": 0.9, "nearer": 0.95})
    assert fused["lone-word"] == weak, "no rank of its own: its BM25 relevance, as words alone"
    assert fused["lone-word"] < min(fused["near"], fused["nearer"])
    assert fused["many-words"] == fused["nearer"]  # first in words as first in meaning
    assert fuse({"lone-word": weak}, {}) == {"lone-word": weak}  # words alone: as before


def test_a_lone_common_word_does_not_push_the_nearest_in_meaning_down():
    """ "which language do we use…" shares only "use" with an editor fact; the answer shares
    no word at all, and is the question's nearest item in meaning."""
    editor = item("The user uses Helix now, switched from vscode a few months back.")
    stack = item("User: frontend is React + TypeScript → Assistant: noted", ItemType.EXCHANGE)
    others = [
        item(f"User: unrelated thing {n} → Assistant: noted", ItemType.EXCHANGE) for n in "ab"
    ]
    items = items_of(editor, stack, *others)
    index = VectorIndex("m")
    index.put_many(
        [stack.id, editor.id, *(other.id for other in others)],
        np.array([[1, 0, 0], [0.6, 0.8, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32),
    )
    items.open_vectors(index)
    question = "which language do we use for the web client?"
    ranked = rank(items, question, NOW, config(), np.array([1, 0, 0], dtype=np.float32))
    assert contents(ranked)[0] == stack.content
    words_only = rank(items, question, NOW, config())
    assert contents(words_only) == [editor.content]


def test_profile_items_join_without_a_shared_word_but_episodes_and_howtos_do_not():
    items = items_of(
        item("The user is vegetarian.", ItemType.CONSTRAINT, salience=0.9),
        item("The user's name is Marta.", ItemType.IDENTITY, salience=0.9),
        item("User: how do I bake bread → Assistant: knead it", ItemType.EXCHANGE, 0, 0.5, 0.3),
        item("To bake bread: knead and rest", ItemType.HOWTO),
    )
    ranked = rank(items, "suggest a dinner recipe for tonight", NOW, config())
    assert sorted(contents(ranked)) == ["The user is vegetarian.", "The user's name is Marta."]


def test_score_combines_relevance_recency_salience_confidence_and_type():
    fresh = item("The user's laptop is a ThinkPad.", age_days=0)
    stale = item("The user's laptop bag is blue.", age_days=120)
    doubtful = item("The user's laptop charger is USB-C.", confidence=0.3, salience=0.3)
    ranked = rank(items_of(stale, doubtful, fresh), "laptop", NOW, config())
    assert contents(ranked)[0] == fresh.content
    scores = {s.item.id: s.score for s in ranked}
    assert scores[fresh.id] > scores[stale.id]
    assert scores[fresh.id] > scores[doubtful.id]
    assert all(0 <= s.score <= 1 for s in ranked)


def test_recency_halves_every_decay_days():
    old = item("The user's cat is called Miso.", age_days=30)
    new = item("The user's cat is called Miso!", age_days=0)
    ranked = {s.item.id: s for s in rank(items_of(old, new), "cat", NOW, config(decayDays=30))}
    assert ranked[new.id].relevance == ranked[old.id].relevance
    assert round(ranked[new.id].score - ranked[old.id].score, 6) == round(0.15 * 0.5, 6)


def test_per_layer_top_k_is_respected():
    facts = [item(f"Deploy note number {n} about the cluster.", age_days=n) for n in range(10)]
    episodes = [
        item(f"User: deploy the cluster, take {n} → Assistant: done", ItemType.EXCHANGE, n, 0.5)
        for n in range(10)
    ]
    ranked = rank(
        items_of(*facts, *episodes),
        "deploy cluster",
        NOW,
        config(semanticTopK=2, episodicTopK=1, proceduralTopK=0),
    )
    layers = [s.item.layer for s in ranked]
    assert layers.count(Layer.SEMANTIC) == 2 and layers.count(Layer.EPISODIC) == 1
    assert [s.score for s in ranked] == sorted((s.score for s in ranked), reverse=True)


def test_episodes_older_than_lookback_and_expired_items_are_not_recalled():
    old_episode = item(
        "User: the kafka broker died → Assistant: restart", ItemType.EXCHANGE, 30, 0.5
    )
    expired = item("Temporary kafka note.", age_days=5, ttl_days=2)
    fresh_episode = item("User: kafka lag again → Assistant: add partitions", ItemType.EXCHANGE, 1)
    stored = items_of(old_episode, expired, fresh_episode)
    ranked = rank(stored, "kafka", NOW, config(lookbackDays=21, episodicTtlDays=30))
    assert contents(ranked) == [fresh_episode.content]
    # With no TTL in the config, a TTL stored with an item counts no more.
    ranked = rank(stored, "kafka", NOW, config(lookbackDays=21))
    assert sorted(contents(ranked)) == sorted([expired.content, fresh_episode.content])


def scored(content, score, source=""):
    return ScoredItem(item(content, source=source), score, 0.5)


def text_tokens(*contents):
    """The budget in tokens that `contents` as facts of one day take in `# Memory`."""
    lines = ["2026-03-01:", *(prompt_line(item(content)) for content in contents)]
    return -(-len("\n".join(lines)) // 4)


def bodies(packed):
    """The pack's item lines without their `- ` and id: what each says."""
    return [
        line[2:].split(" ", 1)[1] if line.startswith("- #") else line[2:]
        for line in packed.lines
        if line.startswith("- ")
    ]


def test_packing_stays_within_the_soft_budget_for_ordinary_scores():
    contents = [f"Fact number {n} " + "x" * 150 for n in range(10)]
    ranked = [scored(content, 0.6 - n / 100) for n, content in enumerate(contents)]
    soft = text_tokens(*contents[:3])
    packed = pack(ranked, config(softBudgetTokens=soft, hardBudgetTokens=soft * 3))
    assert bodies(packed) == contents[:3]
    assert len(packed.text()) <= soft * 4
    assert packed.tokens == estimate_tokens(packed.text())


def test_high_score_items_overflow_the_soft_budget_but_never_the_hard_one():
    text = "A long and important fact " + "y" * 150
    contents = [f"{n} {text}" for n in range(6)]
    ranked = [scored(content, 0.9) for content in contents] + [scored(f"low {text}", 0.5)]
    soft, hard = text_tokens(*contents[:2]), text_tokens(*contents[:4])
    packed = pack(
        ranked, config(softBudgetTokens=soft, hardBudgetTokens=hard, overflowMinScore=0.8)
    )
    assert bodies(packed) == contents[:4], (
        "two within soft, two more by overflow, then the hard stop"
    )
    assert len(packed.text()) <= hard * 4


def test_a_low_score_item_does_not_overflow_but_a_smaller_one_after_it_fits():
    first, big, small = "first " + "a" * 200, "b" * 400, "small fact"
    ranked = [scored(first, 0.6), scored(big, 0.55), scored(small, 0.5)]
    soft = text_tokens(first, small)
    packed = pack(
        ranked, config(softBudgetTokens=soft, hardBudgetTokens=2000, overflowMinScore=0.9)
    )
    assert bodies(packed) == [first, small]


def test_an_oversized_best_item_is_shortened_to_the_hard_budget():
    ranked = [scored("z" * 2000, 0.95)]
    packed = pack(ranked, config(softBudgetTokens=50, hardBudgetTokens=60, overflowMinScore=0.8))
    assert len(bodies(packed)) == 1 and packed.text().endswith("…")
    assert len(packed.text()) <= 60 * 4


def test_an_exchange_is_skipped_when_a_fact_from_the_same_turn_is_in():
    fact = scored("The user's name is Marta.", 0.9, source="turn:a:1")
    episode = ScoredItem(
        item("User: my name is Marta → Assistant: hi", ItemType.EXCHANGE, source="turn:a:1"), 0.5, 1
    )
    other = ScoredItem(
        item("User: trip to Porto → Assistant: plan", ItemType.EXCHANGE, source="turn:a:2"), 0.4, 1
    )
    packed = pack([fact, episode, other], config())
    assert bodies(packed) == ["The user's name is Marta.", "trip to Porto"]


def test_a_fact_saying_most_of_its_turns_exchange_takes_its_place_whichever_comes_first():
    fact = scored("The user's staging server is at 10.0.0.5.", 0.6, source="turn:a:1")
    said = "User: remember that my staging server is at 10.0.0.5 → Assistant: noted"
    episode = ScoredItem(item(said, ItemType.EXCHANGE, source="turn:a:1"), 0.7, 1)

    assert bodies(pack([episode, fact], config())) == ["The user's staging server is at 10.0.0.5."]
    assert bodies(pack([fact, episode], config())) == ["The user's staging server is at 10.0.0.5."]


def test_rendered_lines_carry_type_date_and_id():
    fact = item("The user's server is at 10.0.0.5.")
    assert render_line(fact) == f"- [fact 2026-03-01 #{fact.id}] The user's server is at 10.0.0.5."


def test_index_follows_changes_in_place():
    first = item("The user's boat is called Wave.")
    items = items_of(first)
    assert contents(rank(items, "boat", NOW, config())) == [first.content]
    renamed = "The user's kayak is called Wave."
    items.put(first.model_copy(update={"content": renamed, "title": renamed}))
    assert rank(items, "boat", NOW, config()) == []
    assert len(rank(items, "kayak", NOW, config())) == 1
    items.remove(first.id)
    assert rank(items, "kayak", NOW, config()) == [] and len(items) == 0


def test_long_postings_are_read_only_where_they_can_matter(monkeypatch):
    monkeypatch.setattr("bot.memory.index.SCAN_LIMIT", 3)
    common = [item(f"Weather note {n}: rain again today.", age_days=10 - n) for n in range(8)]
    rare = item("Weather in Tromsø: rain and aurora.", age_days=20)
    items = items_of(rare, *common)
    limited = {s.item.id: s.relevance for s in rank(items, "rain in Tromsø", NOW, config())}
    assert list(limited) == [rare.id], "the common word did not pull in every rainy note"
    monkeypatch.setattr("bot.memory.index.SCAN_LIMIT", 1000)
    full = {s.item.id: s.relevance for s in rank(items, "rain in Tromsø", NOW, config())}
    assert limited[rare.id] == full[rare.id], "a found item's relevance is exact"
    monkeypatch.setattr("bot.memory.index.SCAN_LIMIT", 3)

    only_common = rank(items, "rain weather", NOW, config(semanticTopK=10))
    assert len(only_common) == 3, "a query of common words only reads the newest postings"
    assert {s.item.content for s in only_common} == {c.content for c in common[-3:]}


def test_an_exchange_line_is_the_users_words_dated_when_said():
    said = item("User: we adopted a grey cat → Assistant: Lovely! Enjoy her.", ItemType.EXCHANGE)
    asked = item("User: when is the vet open? → Assistant: Until 6 pm.", ItemType.EXCHANGE)
    polite = item(
        "User: had an interview today?? → Assistant: Okay, good to know. Tell me if I can help.",
        ItemType.EXCHANGE,
    )
    named = item("User: what is my cat called? → Assistant: Miso.", ItemType.EXCHANGE)
    advised = item(
        f"User: how to train a cat? → Assistant: {'Be patient. ' * 20}", ItemType.EXCHANGE
    )
    assert pack([ScoredItem(said, 0.5, 1)], config()).lines == [
        "2026-03-01:",
        "- we adopted a grey cat",
    ]
    assert prompt_line(asked) == "- when is the vet open? → Until 6 pm."
    assert prompt_line(advised) == "- how to train a cat?"
    assert prompt_line(polite) == "- had an interview today??", "a polite reply adds no fact"
    assert prompt_line(named) == "- what is my cat called? → Miso."


def test_an_exchange_saying_more_than_its_turns_fact_is_kept_and_the_fact_left_out():
    turn = "turn:a:1"
    fact = scored("The user's accent is tragic.", 0.9, source=turn)
    said = "User: started a Spanish course on Tuesday nights, my accent is tragic → Assistant: Ha"
    episode = ScoredItem(item(said, ItemType.EXCHANGE, source=turn), 0.5, 1)
    packed = pack([fact, episode], config())
    assert bodies(packed) == ["started a Spanish course on Tuesday nights, my accent is tragic"]
    assert [scored.item for scored in packed.items] == [episode.item]
    assert len(pack([episode, fact], config()).items) == 1, "the exchange says the fact already"


def test_exchanges_compete_from_further_down_the_meaning_ranking_than_facts():
    near = {f"f{at}": 0.9 - at / 100 for at in range(SEMANTIC_POOL)}
    facts = {key: item(f"Fact number {key}.") for key in [*near, "far_fact"]}
    far_episode = item("User: the far exchange → Assistant: ok", ItemType.EXCHANGE)
    chosen = within_pools(
        {**near, "far_fact": 0.5, "far_episode": 0.49},
        {**facts, "far_episode": far_episode},
    )
    assert "far_episode" in chosen and "far_fact" not in chosen
    assert set(near) <= set(chosen)


def test_memory_is_laid_out_by_day_oldest_first_each_day_once():
    older_fact = scored("The user's sister Leila lives in Porto.", 0.9)
    older_fact = ScoredItem(item(older_fact.item.content, age_days=40), 0.9, 1)
    said = item("User: we found a flat in Bedminster → Assistant: Great!", ItemType.EXCHANGE, 40)
    today = item("User: the flat has a leak → Assistant: Oh no.", ItemType.EXCHANGE)
    packed = pack([ScoredItem(today, 0.8, 1), older_fact, ScoredItem(said, 0.5, 1)], config())
    assert packed.lines == [
        "2026-01-20:",
        f"- #{older_fact.item.id} The user's sister Leila lives in Porto.",
        "- we found a flat in Bedminster",
        "2026-03-01:",
        "- the flat has a leak",
    ]
    assert [scored.item for scored in packed.items] == [today, older_fact.item, said]
    assert packed.tokens == estimate_tokens(packed.text())


def test_within_a_day_what_the_question_found_comes_before_the_profile():
    found = ScoredItem(item("The user's team tracks bugs in Linear."), 0.5, 0.6)
    profile = ScoredItem(item("The user is allergic to penicillin.", ItemType.CONSTRAINT), 0.9, 0.0)
    assert bodies(pack([found, profile], config())) == [
        "The user's team tracks bugs in Linear.",
        "The user is allergic to penicillin.",
    ]


def test_a_request_to_the_assistant_counts_less_by_meaning_than_a_statement():
    request = item(
        "User: any tips for falling asleep faster? → Assistant: a dark room", ItemType.EXCHANGE
    )
    statement = item(
        "User: joined the male voice choir in Canton, rehearsals on Wednesday nights"
        " → Assistant: lovely",
        ItemType.EXCHANGE,
    )
    russian = item(
        "User: как мне перестать откладывать дела → Assistant: по шагам", ItemType.EXCHANGE
    )
    found = {request.id: request, statement.id: statement, russian.id: russian}
    nearest = {request.id: 0.83, russian.id: 0.82, statement.id: 0.81}

    choice = episode_choice({}, nearest, found)

    assert choice[statement.id] > choice[request.id] > 0
    assert choice[statement.id] > choice[russian.id] > 0


def test_a_request_still_counts_fully_by_its_words():
    request = item(
        "User: can you recommend a good book? something light → Assistant: try Wodehouse",
        ItemType.EXCHANGE,
    )
    statement = item("User: started a new series last night → Assistant: nice", ItemType.EXCHANGE)
    unrelated = item("User: the plot looks proper now → Assistant: well done", ItemType.EXCHANGE)
    found = {request.id: request, statement.id: statement, unrelated.id: unrelated}

    choice = episode_choice({request.id: 0.9, statement.id: 0.8}, {unrelated.id: 0.8}, found)

    assert choice[request.id] > choice[statement.id]
