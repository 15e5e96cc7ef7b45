"""Russian extraction rules: "меня зовут…", "я предпочитаю…", "мы деплоим…", "запомни…"."""

from __future__ import annotations

from bot.memory.facts import Fact, Match, procedure, rule, slot_key, stated
from bot.memory.model import ItemType


@rule(r"^(?:меня зовут|моё имя|мое имя|зови меня)\s+(?P<v>.+)$")
def _name_ru(m: Match) -> Fact | None:
    if len(m["v"].split()) > 4:
        return None
    return stated(ItemType.IDENTITY, "Пользователя зовут {}.", m["v"], 0.95, key="name")


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
    verb = _RU_PREFERENCE[m["verb"].lower()]
    return stated(ItemType.PREFERENCE, f"Пользователь {verb} {{}}.", m["v"], 0.85)


@rule(r"^мне\s+(?:очень\s+)?(?P<n>не\s+)?нравится\s+(?P<v>.+)$")
def _likes_ru(m: Match) -> Fact | None:
    verb = "не нравится" if m["n"] else "нравится"
    return stated(ItemType.PREFERENCE, f"Пользователю {verb} {{}}.", m["v"], 0.75)


@rule(r"^я\s+живу\s+(?P<v>(?:в|во|на)\s+.+)$")
def _home_ru(m: Match) -> Fact | None:
    return stated(ItemType.IDENTITY, "Пользователь живёт {}.", m["v"], 0.9, key="home")


@rule(r"^я\s+работаю\s+(?P<v>.+)$")
def _work_ru(m: Match) -> Fact | None:
    key = "employer" if m["v"].lower().startswith(("в ", "на ")) else None
    return stated(ItemType.IDENTITY, "Пользователь работает {}.", m["v"], 0.85, key)


@rule(r"^у меня\s+аллергия\s+на\s+(?P<v>.+)$")
def _allergy_ru(m: Match) -> Fact | None:
    return stated(ItemType.CONSTRAINT, "У пользователя аллергия на {}.", m["v"], 0.9)


@rule(r"^я\s+(?P<v>вегетарианец|вегетарианка|веган)\b.*$")
def _diet_ru(m: Match) -> Fact | None:
    return stated(ItemType.CONSTRAINT, "Пользователь — {}.", m["v"].lower(), 0.9)


@rule(r"^(?:мой|моя|моё|мое|мои)\s+(?P<k>[\w -]{1,40}?)\s*(?:—|–|-|это|:)\s*(?P<v>.+)$")
def _my_thing_ru(m: Match) -> Fact | None:
    thing = m["k"].strip()
    if len(thing.split()) > 4:
        return None
    template = f"{thing.capitalize()} пользователя: {{}}."
    return stated(ItemType.FACT, template, m["v"], 0.85, slot_key("мой", thing))


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
    verb = m["verb"].lower()
    key = slot_key("мы", verb) if verb in ("деплоим", "хостим", "разворачиваем") else None
    return stated(ItemType.FACT, f"Команда пользователя {_RU_TEAM[verb]} {{}}.", m["v"], 0.8, key)


@rule(r"^(?P<v>(?:всегда|никогда не)\s+.+)$")
def _standing_order_ru(m: Match) -> Fact | None:
    return stated(ItemType.CONSTRAINT, "Постоянное указание пользователя: {}.", m["v"], 0.85)


@rule(
    r"^чтобы\s+(?P<goal>.+?),\s*(?:нужно\s+|надо\s+)?(?P<verb>выполни|запусти|набери|используй|"
    r"выполнить|запустить|набрать|использовать)\s+(?P<how>.+)$"
)
def _howto_ru(m: Match) -> Fact | None:
    template = f"Чтобы {{goal}}: {m['verb'].lower()} {{how}}"
    return procedure(template, m["goal"], m["how"], "howto")
