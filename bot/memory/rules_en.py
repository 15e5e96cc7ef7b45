"""English extraction rules: "my name is…", "I prefer…", "we deploy with…", "to X, run Y"."""

from __future__ import annotations

from bot.memory.facts import DISCOURSE_NOUNS, Fact, Match, procedure, rule, slot_key, stated
from bot.memory.model import ItemType


@rule(
    r"^(?:my name is|my name's|call me|i am called|i'm called|i’m called|people call me)"
    r"\s+(?P<v>.+)$"
)
def _name(m: Match) -> Fact | None:
    if len(m["v"].split()) > 4:
        return None
    return stated(ItemType.IDENTITY, "The user's name is {}.", m["v"], 0.95, key="name")


@rule(r"^my\s+(?P<k>[\w'’ -]{1,40}?)\s+(?:is|are|was|were)\s+(?P<v>.+)$")
def _my_thing(m: Match) -> Fact | None:
    thing = m["k"].strip()
    words = thing.lower().split()
    if len(words) > 4 or words[-1] in DISCOURSE_NOUNS:
        return None
    kind = ItemType.PREFERENCE if words[0] in ("favorite", "favourite") else ItemType.FACT
    template = f"The user's {thing} is {{}}."
    return stated(kind, template, m["v"], 0.85, slot_key("my", thing))


_KIN = (
    r"(?:older |younger |little |big |baby |best |twin )?(?:sister|brother|sibling|mother|mum|"
    r"mom|father|dad|parents|daughter|son|kids?|children|wife|husband|partner|girlfriend|"
    r"boyfriend|fianc[ée]e?|grandmother|grandma|grandfather|grandpa|aunt|uncle|cousin|niece|"
    r"nephew|friend|boss|manager|colleague|flatmate|roommate|dog|cat|puppy|kitten)"
)
_KIN_VERBS = (
    r"lives|moved|works|worked|turns|turned|studies|is turning|is moving|plays|teaches|runs|"
    r"owns|was born|retired"
)


@rule(rf"^my\s+(?P<k>{_KIN})(?:\s+(?P<name>[A-Z][\w'’-]+))?\s+(?P<v>(?:{_KIN_VERBS})\b.+)$")
def _my_person(m: Match) -> Fact | None:
    """ "btw my sister Olga lives in Porto", "my daughter Ana turns 7 in March": a fact about
    someone close, keyed by who and what, so "my sister lives in Lisbon now" updates it."""
    who = m["k"].lower() + (f" {m['name']}" if m["name"] else "")
    verb = m["v"].split()[0].lower()
    template = f"The user's {who} {{}}."
    return stated(ItemType.FACT, template, m["v"], 0.85, slot_key("my", who, verb))


@rule(
    r"^i(?:'m|’m| am)\s+(?P<v>allergic to .+|(?:a |an )?(?:vegetarian|vegan|pescatarian|"
    r"lactose[- ]intolerant|diabetic|celiac|coeliac|gluten[- ]intolerant)\b.*)$"
)
def _condition(m: Match) -> Fact | None:
    return stated(ItemType.CONSTRAINT, "The user is {}.", m["v"], 0.9)


@rule(
    r"^i\s+(?P<n>can't|cannot|can not|don't|do not|never)"
    r"\s+(?P<verb>eat|drink|use|work)\s+(?P<v>.+)$"
)
def _cannot(m: Match) -> Fact | None:
    said = m["n"].lower()
    negation = "never" if said == "never" else ("cannot" if said.startswith("can") else "does not")
    template = f"The user {negation} {m['verb'].lower()} {{}}."
    return stated(ItemType.CONSTRAINT, template, m["v"], 0.85)


_PREFERENCE_VERBS = {
    "prefer": ("prefers", 0.85),
    "like": ("likes", 0.75),
    "love": ("loves", 0.8),
    "enjoy": ("enjoys", 0.75),
    "hate": ("hates", 0.8),
    "dislike": ("dislikes", 0.8),
    "don't like": ("does not like", 0.8),
    "do not like": ("does not like", 0.8),
    "can't stand": ("cannot stand", 0.8),
}


@rule(
    r"^i\s+(?:really\s+|much\s+|strongly\s+|usually\s+|generally\s+)?"
    r"(?P<verb>prefer|like|love|enjoy|hate|dislike|don't like|do not like|can't stand)\s+(?P<v>.+)$"
)
def _preference(m: Match) -> Fact | None:
    verb, confidence = _PREFERENCE_VERBS[m["verb"].lower().replace("’", "'")]
    return stated(ItemType.PREFERENCE, f"The user {verb} {{}}.", m["v"], confidence)


@rule(r"^i(?:'m|’m| am)\s+(?P<v>(?:a|an)\s+.+)$")
def _role(m: Match) -> Fact | None:
    return stated(ItemType.IDENTITY, "The user is {}.", m["v"], 0.8)


@rule(r"^i(?:'m|’m| am)\s+(?P<v>\d{1,3})(?:\s+years?\s+old)?$")
def _age(m: Match) -> Fact | None:
    return stated(ItemType.IDENTITY, "The user is {} years old.", m["v"], 0.85, key="age")


@rule(r"^i\s+(?:work|am working|'m working)\s+(?P<prep>as|at|for|in|on)\s+(?P<v>.+)$")
def _work(m: Match) -> Fact | None:
    prep = m["prep"].lower()
    key = "employer" if prep in ("at", "for") else ("role" if prep == "as" else None)
    return stated(ItemType.IDENTITY, f"The user works {prep} {{}}.", m["v"], 0.85, key)


@rule(
    r"^i\s+(?:live|am living|'m living)\s+in\s+(?P<v>.+)$|^i(?:'m|’m| am)\s+based\s+in\s+(?P<b>.+)$"
)
def _home(m: Match) -> Fact | None:
    return stated(ItemType.IDENTITY, "The user lives in {}.", m["v"] or m["b"], 0.9, key="home")


@rule(r"^i(?:'m|’m| am)\s+from\s+(?P<v>.+)$")
def _origin(m: Match) -> Fact | None:
    return stated(ItemType.IDENTITY, "The user is from {}.", m["v"], 0.85, key="origin")


@rule(r"^i\s+(?:use|am using|'m using)\s+(?P<v>.+)$")
def _i_use(m: Match) -> Fact | None:
    return stated(ItemType.FACT, "The user uses {}.", m["v"], 0.75)


_TEAM_VERBS = "deploy|use|run|host|build|ship|store|keep|write|test|release|code|develop|monitor"


@rule(rf"^we(?:'re|’re| are)?\s+(?:(?P<verb>{_TEAM_VERBS})(?:ing)?|(?P<using>using))\s+(?P<v>.+)$")
def _team(m: Match) -> Fact | None:
    verb = m["verb"].lower() if m["verb"] else "use"  # "using" is not "use" + "ing"
    third = verb + ("es" if verb.endswith(("sh", "ch", "s", "x")) else "s")
    key = slot_key("we", verb) if verb in ("deploy", "host") else None
    return stated(ItemType.FACT, f"The user's team {third} {{}}.", m["v"], 0.8, key)


@rule(r"^our\s+(?P<k>[\w'’ -]{1,40}?)\s+(?:is|are|runs on|lives (?:at|on|in))\s+(?P<v>.+)$")
def _our_thing(m: Match) -> Fact | None:
    thing = m["k"].strip()
    if thing.lower().split()[-1] in DISCOURSE_NOUNS:
        return None
    template = f"The user's team's {thing}: {{}}."
    return stated(ItemType.FACT, template, m["v"], 0.8, slot_key("our", thing))


_DIRECTIVES = frozenset(
    """answer reply respond use write call format include ask tell remind speak talk show
    add mention say suggest recommend explain send cite address greet spell round translate
    quote list summarise summarize offer check double-check assume convert measure""".split()
)
"""What a standing instruction asks of the assistant: "always answer in British English",
"never suggest pork". "Never give up" and "always here to help" are sayings, not requests."""


@rule(r"^(?:please\s+)?(?P<v>(?:always|never|don't ever|do not ever)\s+(?P<w>[\w-]+).*)$")
def _standing_order(m: Match) -> Fact | None:
    if m["w"].lower() not in _DIRECTIVES:
        return None
    return stated(ItemType.CONSTRAINT, "Standing instruction from the user: {}.", m["v"], 0.85)


@rule(
    r"^to\s+(?P<goal>[^,]{3,80}?),?\s+(?:you\s+)?(?:just\s+)?(?:need to\s+|have to\s+)?"
    r"(?:run|use|type|execute|call|do)\s+(?P<how>.+)$"
)
def _howto(m: Match) -> Fact | None:
    return procedure("To {goal}: {how}", m["goal"], m["how"], "howto")


@rule(r"^(?:the\s+)?(?:command|cmd)\s+(?:to|for)\s+(?P<goal>.+?)\s+is\s+(?P<how>.+)$")
def _command(m: Match) -> Fact | None:
    return procedure("To {goal}: {how}", m["goal"], m["how"], "howto")


@rule(
    r"^(?:the\s+)?fix\s+for\s+(?P<goal>.+?)\s+(?:is|was)\s+(?P<how>.+)$"
    r"|^we\s+fix(?:ed)?\s+(?P<g>.+?)\s+by\s+(?P<h>.+)$"
)
def _fix(m: Match) -> Fact | None:
    return procedure("Fix for {goal}: {how}", m["goal"] or m["g"], m["how"] or m["h"], "fix")
