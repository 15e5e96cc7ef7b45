"""Russian extraction rules: "меня зовут…", "я предпочитаю…", "мы деплоим…", "запомни…"."""

from __future__ import annotations

from bot.memory.facts import Fact, Match, clean_value, rule, slot_key
from bot.memory.items import ItemType


@rule(r"^(?:меня зовут|моё имя|мое имя|зови меня)\s+(?P<v>.+)$")
def _name_ru(m: Match) -> Fact | None:
    value = clean_value(m["v"])
    if value is None or len(value.split()) > 4:
        return None
    return Fact(ItemType.IDENTITY, f"Пользователя зовут {value}.", 0.95, key="name")


_RU_PREFERENCE = {
    "предпочитаю": "предпочитает",
    "люблю": "любит",
    "обожаю": "обожает",
    "не люблю": "не любит",
    "ненавижу": "ненавидит",
}


@rule(
    r"^я\s+(?:очень\s+|обычно\s+)?(?P<verb>предпочитаю|люблю|обожаю|не люблю|ненавижу)\s+(?P<v>.+)$"
)
def _preference_ru(m: Match) -> Fact | None:
    value = clean_value(m["v"])
    verb = _RU_PREFERENCE[m["verb"].lower()]
    return Fact(ItemType.PREFERENCE, f"Пользователь {verb} {value}.", 0.85) if value else None


@rule(r"^мне\s+(?:очень\s+)?(?P<n>не\s+)?нравится\s+(?P<v>.+)$")
def _likes_ru(m: Match) -> Fact | None:
    value = clean_value(m["v"])
    verb = "не нравится" if m["n"] else "нравится"
    return Fact(ItemType.PREFERENCE, f"Пользователю {verb} {value}.", 0.75) if value else None


@rule(r"^я\s+живу\s+(?P<v>(?:в|во|на)\s+.+)$")
def _home_ru(m: Match) -> Fact | None:
    value = clean_value(m["v"])
    return (
        Fact(ItemType.IDENTITY, f"Пользователь живёт {value}.", 0.9, key="home") if value else None
    )


@rule(r"^я\s+работаю\s+(?P<v>.+)$")
def _work_ru(m: Match) -> Fact | None:
    value = clean_value(m["v"])
    key = "employer" if value and value.lower().startswith(("в ", "на ")) else None
    return Fact(ItemType.IDENTITY, f"Пользователь работает {value}.", 0.85, key) if value else None


@rule(r"^у меня\s+аллергия\s+на\s+(?P<v>.+)$|^я\s+(?P<d>вегетарианец|вегетарианка|веган)\b.*$")
def _condition_ru(m: Match) -> Fact | None:
    if m["d"]:
        return Fact(ItemType.CONSTRAINT, f"Пользователь — {m['d'].lower()}.", 0.9)
    value = clean_value(m["v"])
    return Fact(ItemType.CONSTRAINT, f"У пользователя аллергия на {value}.", 0.9) if value else None


@rule(r"^(?:мой|моя|моё|мое|мои)\s+(?P<k>[\w -]{1,40}?)\s*(?:—|–|-|это|:)\s*(?P<v>.+)$")
def _my_thing_ru(m: Match) -> Fact | None:
    thing, value = m["k"].strip(), clean_value(m["v"])
    if value is None or len(thing.split()) > 4:
        return None
    return Fact(
        ItemType.FACT, f"{thing.capitalize()} пользователя: {value}.", 0.85, slot_key("мой", thing)
    )


_RU_TEAM = {
    "деплоим": "деплоит",
    "используем": "использует",
    "разворачиваем": "разворачивает",
    "храним": "хранит",
    "пишем": "пишет",
    "работаем": "работает",
    "хостим": "хостит",
}


@rule(r"^мы\s+(?P<verb>деплоим|используем|разворачиваем|храним|пишем|работаем|хостим)\s+(?P<v>.+)$")
def _team_ru(m: Match) -> Fact | None:
    value, verb = clean_value(m["v"]), m["verb"].lower()
    key = slot_key("мы", verb) if verb in ("деплоим", "хостим", "разворачиваем") else None
    return (
        Fact(ItemType.FACT, f"Команда пользователя {_RU_TEAM[verb]} {value}.", 0.8, key)
        if value
        else None
    )


@rule(r"^(?P<v>(?:всегда|никогда не)\s+.+)$")
def _standing_order_ru(m: Match) -> Fact | None:
    value = clean_value(m["v"])
    return (
        Fact(ItemType.CONSTRAINT, f"Постоянное указание пользователя: {value}.", 0.85)
        if value
        else None
    )


@rule(
    r"^чтобы\s+(?P<goal>.+?),\s*(?:нужно\s+|надо\s+)?(?P<verb>выполни|запусти|набери|используй|"
    r"выполнить|запустить|набрать|использовать)\s+(?P<how>.+)$"
)
def _howto_ru(m: Match) -> Fact | None:
    goal, how = clean_value(m["goal"]), clean_value(m["how"])
    if goal is None or how is None:
        return None
    return Fact(
        ItemType.HOWTO, f"Чтобы {goal}: {m['verb'].lower()} {how}", 0.85, slot_key("howto", goal)
    )
