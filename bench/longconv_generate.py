"""Writes `bench/data/longconv.json`, the long-conversation evaluation set, from the stories in
`bench/longconv_stories.py` and the small talk of each split: dev's in
`bench/longconv_chatter.py`, test's in `bench/longconv_chatter_heldout.py` (written apart, so
no line of dev's small talk is in a test conversation).

Each story is one user's life over many months, told in sessions on given dates: the moments
that matter (a move, a new job, a pet, a wedding whose date changes, facts later corrected)
are written by hand, in the user's words, with relative times ("yesterday", "next Tuesday").
The generator puts them in their sessions between small talk and advice questions drawn with
a fixed seed from the story's split's pool, gives every user message the assistant's reply of
its tone, numbers the messages, and resolves each `when` question's answer from its session's
date, so the answer is right by construction. The same seed always writes the same file:

    python -m bench.longconv_generate
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

from bench.longconv_chatter import DEV, Pool
from bench.longconv_chatter_heldout import HELD_OUT
from bench.longconv_stories import STORIES, Chatter, Story

OUT = Path(__file__).resolve().parent / "data" / "longconv.json"
SEED = 20260
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEATHER = ("weather", "sunny")
FILLER_TONES = ("small", "small", "mood", "weather", "sunny", "food", "media", "small")
POOLS: dict[str, Pool] = {"dev": DEV, "test": HELD_OUT}
"""Each split's small talk."""


@dataclass(frozen=True)
class Said:
    role: str
    text: str
    key: str | None = None
    """The story beat this user message tells, if it tells one."""


def session_lines(
    story: Story, at: int, rng: random.Random, used: set[str], advice: list[tuple[str, str]]
) -> list[Said]:
    """One session: its beats among small talk, chatter and advice questions (`advice` is
    what is left to ask; each is asked once), each user line followed by its reply."""
    pool = POOLS[story.split]
    beats = [beat for beat in story.beats if beat.session == at]
    chatter = [c for c in story.chatter if c.after <= at and c.text not in used]
    count = rng.randint(10, 13) - 2 - len(beats)
    fillers = draw_fillers(count, chatter, advice, used, rng, pool)
    slots = sorted(rng.sample(range(len(fillers) + len(beats)), len(beats)))
    middle: list[Line] = list(fillers)
    for slot, beat in zip(slots, beats, strict=True):
        middle.insert(slot, (beat.tone, beat.text, beat.key))
    said: list[Said] = [Said("user", rng.choice(pool.small_talk["greet"]))]
    said.append(_reply("greet", rng, pool))
    for tone, words, extra in middle:
        if tone == "own" and extra is not None:  # a line that comes with its own reply
            said += [Said("user", words), Said("assistant", extra)]
        else:
            said += [Said("user", words, extra), _reply(tone, rng, pool)]
    if rng.random() < 0.75:
        said += [Said("user", rng.choice(pool.small_talk["bye"])), _reply("bye", rng, pool)]
    return said


Line = tuple[str, str, str | None]
"""(tone, the user's words, the reply that goes with them or the beat's key)."""


def draw_fillers(
    count: int,
    chatter: list[Chatter],
    advice: list[tuple[str, str]],
    used: set[str],
    rng: random.Random,
    pool: Pool = DEV,
) -> list[Line]:
    """`count` lines between the beats: chatter about the user's world, an advice question
    now and then, small talk; one weather report at most (the sky does not change mid-chat)."""
    fillers: list[Line] = []
    weather_told = False
    while len(fillers) < count:
        roll = rng.random()
        if roll < 0.3 and chatter:
            line = chatter.pop(rng.randrange(len(chatter)))
            used.add(line.text)
            fillers.append((line.tone, line.text, None))
        elif 0.3 <= roll < 0.4 and advice:
            fillers.append(("own", *advice.pop(rng.randrange(len(advice)))))
        elif (tone := rng.choice(FILLER_TONES)) in pool.paired:
            if tone in WEATHER and weather_told:
                continue
            weather_told = weather_told or tone in WEATHER
            fillers.append(("own", *rng.choice(pool.paired[tone])))
        else:
            fillers.append((tone, rng.choice(pool.small_talk[tone]), None))
    return fillers


def _reply(tone: str, rng: random.Random, pool: Pool) -> Said:
    return Said("assistant", rng.choice(pool.replies[tone]))


def resolve(answer: str, dates: dict[str, date]) -> str:
    """An expected answer; `date:KEY:+N` and `next:KEY:weekday` become the date itself, in the
    forms people write it ("2025-03-14|14 March|March 14"): any one of them counts."""
    if answer.startswith("date:"):
        _, key, shift = answer.split(":")
        return _forms(dates[key] + timedelta(days=int(shift)))
    if answer.startswith("next:"):
        _, key, weekday = answer.split(":")
        said = dates[key]
        ahead = (WEEKDAYS.index(weekday) - said.weekday() - 1) % 7 + 1
        return _forms(said + timedelta(days=ahead))
    return answer


def _forms(day: date) -> str:
    month = day.strftime("%B")
    return f"{day.isoformat()}|{day.day} {month}|{month} {day.day}"


def conversation(story: Story, rng: random.Random) -> dict[str, object]:
    sessions = []
    dates: dict[str, date] = {}
    ids: dict[str, str] = {}
    used: set[str] = set()
    advice = list(POOLS[story.split].advice)
    number = 0
    for at, day in enumerate(story.dates):
        start = datetime.combine(day, time(rng.randint(7, 21), rng.randint(0, 59)))
        messages = []
        for said in session_lines(story, at, rng, used, advice):
            number += 1
            message_id = f"{story.id}-m{number:04d}"
            if said.key is not None:
                dates[said.key], ids[said.key] = day, message_id
            messages.append({"id": message_id, "role": said.role, "text": said.text})
        sessions.append(
            {
                "id": f"{story.id}-s{at + 1:02d}",
                "date": f"{start:%Y-%m-%dT%H:%M}Z",
                "messages": messages,
            }
        )
    questions = [
        {
            "id": f"{story.id}-q{at + 1:02d}",
            "kind": question.kind,
            "question": question.text,
            "evidence": [ids[key] for key in question.evidence],
            "answers": [resolve(answer, dates) for answer in question.answers],
        }
        for at, question in enumerate(story.questions)
    ]
    return {
        "id": story.id,
        "split": story.split,
        "user": story.user,
        "sessions": sessions,
        "questions": questions,
    }


def generate() -> dict[str, object]:
    rng = random.Random(SEED)
    return {
        "about": (
            "Long multi-session conversations between one user and the assistant, with "
            "questions tagged with the ids of the messages that answer them. Written by "
            "bench/longconv_generate.py (fixed seed); split by conversation: tune on dev only."
        ),
        "conversations": [conversation(story, rng) for story in STORIES],
    }


def main() -> None:
    OUT.write_text(json.dumps(generate(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
