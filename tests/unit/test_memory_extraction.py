"""Extraction: durable facts from realistic messages, nothing from small talk or chatter."""

from datetime import UTC, datetime

import pytest

from bot.memory.episodes import items_from_exchange
from bot.memory.extraction import extract_facts
from bot.memory.model import ItemType, Layer
from bot.small_talk import is_trivial_exchange

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def contents(text):
    return [fact.content for fact in extract_facts(text)]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "Hi! My name is Marta and I live in Lisbon.",
            ["The user's name is Marta.", "The user lives in Lisbon."],
        ),
        ("Remember that my server is at 10.0.0.5.", ["The user's server is at 10.0.0.5."]),
        (
            "btw we deploy with Kubernetes on GKE",
            ["The user's team deploys with Kubernetes on GKE."],
        ),
        (
            "We're using Terraform for the network.",
            ["The user's team uses Terraform for the network."],
        ),
        ("We're hosting the docs on Netlify.", ["The user's team hosts the docs on Netlify."]),
        (
            "I prefer tea over coffee, and I hate loud music.",
            [
                "The user prefers tea over coffee.",
                "The user hates loud music.",
            ],
        ),
        ("I'm allergic to peanuts.", ["The user is allergic to peanuts."]),
        ("I don't eat pork.", ["The user does not eat pork."]),
        ("I work at Acme Robotics.", ["The user works at Acme Robotics."]),
        ("My favorite color is teal.", ["The user's favorite color is teal."]),
        (
            "Our staging database is Postgres 15.",
            ["The user's team's staging database: Postgres 15."],
        ),
        (
            "To restart the VPN, run sudo systemctl restart wg-quick@wg0.",
            ["To restart the VPN: sudo systemctl restart wg-quick@wg0"],
        ),
        (
            "Always answer in British English.",
            ["Standing instruction from the user: Always answer in British English."],
        ),
        (
            "remember: the wifi password is hunter2",
            ["The wifi password is hunter2."],
        ),
        ("btw my sister lives in Porto", ["The user's sister lives in Porto."]),
        ("my daughter Ana turns 7 in March", ["The user's daughter Ana turns 7 in March."]),
        (
            "remember that my sister Leila lives in Porto",
            ["The user's sister Leila lives in Porto."],
        ),
        ("I'm allergic to peanuts, remember that.", ["The user is allergic to peanuts."]),
        (
            "remember that I have a dentist appointment on May 3",
            ["The user has a dentist appointment on May 3."],
        ),
        ("Меня зовут Иван.", ["Пользователя зовут Иван."]),
        ("Я предпочитаю тёмную тему.", ["Пользователь предпочитает тёмную тему."]),
        ("Мы деплоим через Ansible.", ["Команда пользователя деплоит через Ansible."]),
        (
            "Запомни, что код от домофона 4512.",
            ["Пользователь просил запомнить: код от домофона 4512"],
        ),
        (
            "Я вегетарианец, у меня аллергия на орехи.",
            ["Пользователь — вегетарианец.", "У пользователя аллергия на орехи."],
        ),
        (
            "Чтобы перезапустить VPN, выполни wg-quick up wg0",
            ["Чтобы перезапустить VPN: выполни wg-quick up wg0"],
        ),
        ("Call me {name} please", ["The user's name is {name} please."]),
    ],
)
def test_durable_facts_are_extracted(message, expected):
    assert contents(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "I like that idea!",
        "I like it.",
        "I'm fine, thanks.",
        "I'm not sure.",
        "What's my name?",
        "Do you remember where I live?",
        "If my name were Bob, what would you call me?",
        "My question is about Docker.",
        "My bad, I meant the other file.",
        "Never mind.",
        "Never give up.",
        "Always here to help.",
        "We're running late, sorry.",
        "You should check the error log, it should work now.",
        "There is an error in line 3, it should be fixed.",
        "ok thanks",
        "```\nmy name is in this code sample\n```",
        "Как меня зовут?",
    ],
)
def test_small_talk_questions_and_chatter_yield_no_facts(message):
    assert extract_facts(message) == []


def test_explicit_remember_raises_confidence_and_keeps_the_slot():
    plain, explicit = (
        extract_facts("My server is at 10.0.0.5.")[0],
        extract_facts("Please remember that my server is at 10.0.0.5.")[0],
    )
    assert plain.key == explicit.key == "my:server"
    assert explicit.confidence > plain.confidence


def test_a_fact_exchange_gives_semantic_items_and_one_episode():
    items = items_from_exchange(
        "My name is Marta. Could you help me plan a trip to Porto next week?",
        "Of course, Marta! Here is a three-day plan for Porto: day one, Ribeira and the bridge...",
        "turn:t:1",
        NOW,
        episode_ttl_days=90,
    )
    assert [(i.layer, i.type) for i in items] == [
        (Layer.SEMANTIC, ItemType.IDENTITY),
        (Layer.EPISODIC, ItemType.EXCHANGE),
    ]
    fact, episode = items
    assert fact.confidence >= 0.9 and fact.ttl_days is None
    assert episode.confidence == 0.5 and episode.ttl_days == 90
    assert {fact.source, episode.source} == {"turn:t:1"}
    assert "Porto" in episode.content and episode.content.startswith("User: My name is Marta.")


@pytest.mark.parametrize(
    ("user", "assistant"),
    [
        ("hi", "Hello! How can I help you today? I'm ready for anything."),
        ("Thanks!", "You're welcome! Let me know if you need anything else at all."),
        ("Спасибо", "Пожалуйста! Обращайтесь, если что-нибудь ещё понадобится."),
        ("ok cool", "Great."),
        ("Explain monads in detail please", ""),
        ("why?", "Because the cache was stale and needed a refresh after the deploy."),
    ],
)
def test_trivial_exchanges_are_not_episodes(user, assistant):
    assert is_trivial_exchange(user, assistant)
    assert items_from_exchange(user, assistant, "s", NOW, 90) == []


def test_a_substantial_exchange_is_an_episode_without_keywords_mattering():
    user = "How do I rotate the TLS certificate on the staging load balancer?"
    assistant = "Upload the new certificate, then switch the listener to it and reload."
    assert not is_trivial_exchange(user, assistant)
    (episode,) = items_from_exchange(user, assistant, "s", NOW, 90)
    assert episode.layer is Layer.EPISODIC and episode.confidence == 0.5
