# ruff: noqa: E501 (a reply is one string, as the model wrote it)
"""What fills a long conversation between the moments that matter: small talk as people type
it and the assistant's replies, at the lengths a chat model writes them.

`bench/longconv_generate.py` draws from these pools with a fixed seed. Every user line has a
tone, and the assistant answers from the pool of that tone; the advice questions carry their
own answers, because a real model answers the question that was asked.

These are the dev split's pools (`DEV`); the test split draws from its own, written
separately (`bench/longconv_chatter_heldout.py`), so nothing tuned on dev's small talk is
measured on the same lines.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pool:
    """One split's small talk: user lines by tone, the assistant's replies by tone, user lines
    that come with their own reply, and advice questions with their answers."""

    small_talk: dict[str, list[str]]
    replies: dict[str, list[str]]
    paired: dict[str, list[tuple[str, str]]]
    advice: list[tuple[str, str]]


SMALL_TALK: dict[str, list[str]] = {
    "greet": [
        "hey",
        "hi again",
        "hi :)",
        "hello",
        "hello hello",
        "hey, you there?",
        "ok I'm back",
        "hiya",
        "hey hey",
        "yo",
        "hey it's me again",
        "heyy",
    ],
    "small": [
        "haha fair enough",
        "yeah I guess so",
        "sounds good to me",
        "true",
        "lol",
        "ok cool",
        "hmm maybe",
        "right, makes sense",
        "nice",
        "oh interesting",
        "thanks, that helps",
        "I'll think about it",
        "yeah exactly",
        "ha, no idea honestly",
        "same tbh",
        "fair point",
        "ok ok",
        "that's actually useful, thanks",
        "not sure yet",
        "good to know",
        "mm yeah",
        "will do",
    ],
    "bye": [
        "ok gotta go",
        "night!",
        "talk later",
        "thanks, bye for now",
        "off to bed",
        "ok that's it for today",
        "cheers, chat soon",
        "gotta run, thanks!",
    ],
}

REPLIES: dict[str, list[str]] = {
    "greet": [
        "Hey! Good to hear from you. How's your day going so far?",
        "Hi! I'm here. What's on your mind today?",
        "Hello again! Anything you'd like to talk through, or just checking in?",
        "Hey there! How have things been since we last talked?",
        "Hi! Nice to hear from you again. How are things?",
    ],
    "small": [
        "Fair enough!",
        "Sure. Let me know if you want to go over anything again.",
        "Ha, understandable.",
        "Got it.",
        "Totally. Anything else on your mind?",
        "Mm, yeah.",
        "No rush at all.",
    ],
    "aside": [
        "Ha, sounds about right!",
        "That made me smile.",
        "Never a dull moment, it seems!",
        "Ha! I can picture it.",
        "Oh no, haha. Hope it gets better!",
    ],
    "mood": [
        "That sounds like a lot. I hope you get a bit of downtime soon; even half an hour "
        "that's just for you makes a difference.",
        "Ha, I can imagine. Hang in there!",
        "Oof. Those little things add up over a day. Anything I can help with?",
        "Sounds tiring. Be kind to yourself this evening.",
    ],
    "food": [
        "That sounds delicious!",
        "Good food makes everything better. Enjoy!",
        "Now I'm curious, what did you have?",
    ],
    "weather": [
        "Ugh, that kind of weather makes everything feel slower. Stay dry!",
        "Weather really does set the mood of a day, doesn't it?",
    ],
    "bye": [
        "Take care! Talk soon.",
        "Bye for now, take it easy!",
        "Bye for now, I'm here whenever you need me.",
        "Have a good one!",
        "Talk later! Enjoy the rest of your day.",
    ],
    "good": [
        "That's fantastic news, congratulations! It sounds like something you've been hoping for, and it's lovely to hear it come together. Big changes like this can feel exciting and a little overwhelming at the same time, so give yourself a moment to enjoy it before you dive into all the practical details. Is there anything coming up next that you'd like help preparing for?",
        "Oh, I love this! Moments like that are worth holding on to. If you want, tell me more about how it happened; I'd love to hear the details. And if there's anything to organise around it, like dates, bookings or a list of things to sort out, I'm happy to help you put it together.",
        "That's such good news. You've had a lot going on lately, so it's really nice to hear something go well. How are you going to celebrate? Even something small, like a nice dinner or an evening off, is a good way to mark it.",
        "That's wonderful news, congratulations! You must be really pleased. How are you "
        "feeling about it now that it's sinking in?",
        "Oh, that's great! It sounds like things are really coming together for you. Is there "
        "anything you need to sort out next?",
        "Amazing! I'm really happy for you. Let me know if you'd like help planning anything "
        "around it.",
        "What lovely news. Those are the moments worth savouring, so I hope you get to "
        "celebrate a little.",
    ],
    "bad": [
        "I'm really sorry, that sounds stressful and tiring. When something like this happens it can throw the whole week off, so don't be too hard on yourself if other things slip for a bit. If it helps, we could break it down: what needs doing right away, what can wait, and who could give you a hand. And make sure you get some rest in between.",
        "Oh no, that's rotten luck. These things always seem to happen at the worst possible moment. Is it sorted now, or is there still something you need to deal with? If you tell me a bit more I can help you think through the options, or just listen if you'd rather vent.",
        "I'm sorry, that sounds really hard. It's okay to feel thrown by it. Do you want to talk "
        "it through, or would some practical ideas help more right now?",
        "Oh no, that's frustrating. Hopefully it gets sorted quickly. Is there anything I can "
        "help you look into?",
        "That's a lot to deal with. Remember to look after yourself too while you handle it; "
        "these things tend to feel heavier when we're tired.",
    ],
    "news": [
        "Thanks for the update! That's quite a lot of change in a short time. How are you feeling about it overall: more excited, more nervous, or a bit of both? If anything practical comes out of it, like paperwork, planning or just a to-do list, I'm happy to help you keep track.",
        "Ah, good to know, thanks for telling me. It sounds like things are moving along. Let me know how it develops; I'm curious how it all works out, and if you need a second opinion on anything along the way, just ask.",
        "Thanks for telling me! Noted. How do you feel about it?",
        "Got it. That sounds like quite a change. How's it going so far?",
        "Interesting! Tell me more when you have a minute, I'd like to hear how it goes.",
        "Okay, good to know. Let me know if it changes anything I can help with.",
        "Oh, nice. Sounds like there's a lot going on at the moment!",
    ],
    "plan": [
        "Sounds exciting! A few practical things that tend to save stress later: put the dates in your calendar with reminders a few weeks ahead, check whether anything needs booking or paying early, and keep all the confirmations in one place. If other people are involved, a shared note or group chat helps everyone stay on the same page. Want me to help draft a checklist or a rough timeline?",
        "That's a good plan. When plans involve other people, it helps to agree early on the key details (dates, budget, who is doing what) and to leave some room for things to move, because they usually do. If anything changes, just tell me and we can adjust the plan together.",
        "That sounds like a good plan. A few things that usually help: write down the key dates "
        "somewhere you'll see them, sort out anything that needs booking early, and leave a bit "
        "of slack in case something shifts. Want me to help you make a checklist?",
        "Nice, something to look forward to! If you'd like, I can help with a rough schedule "
        "or a list of things to prepare beforehand.",
        "Plans changing is so common, don't worry about it. The main thing is to let everyone "
        "involved know early and double-check any bookings or deposits so nothing is lost.",
    ],
}

PAIRED: dict[str, list[tuple[str, str]]] = {
    "mood": [
        (
            "so tired today, didn't sleep well",
            "Sorry to hear that. A short walk in daylight and an early night tonight can help reset things. Was something keeping you up?",
        ),
        (
            "feeling pretty good actually",
            "That's great to hear! Anything in particular that made today a good one?",
        ),
        (
            "ugh, long week",
            "Long weeks are rough. Pick one small thing to get done and let that be a win; the rest usually feels easier after.",
        ),
        (
            "long day, my brain is fried",
            "Sounds like you've earned a quiet evening. Sometimes the best plan is no plan at all: something easy to eat, a show, and bed.",
        ),
        ("I'm in a weirdly good mood", "Enjoy it! Good moods don't always need a reason."),
        (
            "kind of stressed this week tbh",
            "I'm sorry it's a stressful week. Would it help to list what's on your plate? Writing it down often makes it feel more manageable, and we can see what can wait.",
        ),
        (
            "honestly just want to lie on the sofa all evening",
            "That sounds like a perfectly valid plan. Rest is productive too.",
        ),
        (
            "I had way too much coffee this morning",
            "Too much coffee can make everything feel jittery. A glass of water and a short walk can take the edge off. Maybe go easy on the afternoon cup!",
        ),
        (
            "bit of a headache, nothing serious",
            "Sorry about the headache. Water, a break from screens and some fresh air often help. If it keeps coming back, it's worth getting checked.",
        ),
        (
            "today went better than expected",
            "Love that. It's nice when a day surprises you in a good way.",
        ),
        (
            "meh, one of those days",
            "Those days happen. Be gentle with yourself; tomorrow is a fresh start.",
        ),
        (
            "I feel like I need a holiday",
            "Sounds like you could use a proper break! Even a long weekend with nothing planned can do wonders. Anything you've been dreaming about?",
        ),
        (
            "can't focus on anything today",
            "Some days are like that. Try a short timer, 20 minutes on one thing, then a break. And if it's just not happening, that's okay too.",
        ),
    ],
    "weather": [
        (
            "it's pouring rain here again",
            "Ugh, that kind of weather makes everything feel slower. Perfect excuse for something warm to drink and staying in, though.",
        ),
        (
            "so windy I nearly lost my umbrella",
            "Ha, umbrellas never stand a chance in proper wind. Hope you made it inside dry!",
        ),
        (
            "it's freezing this morning",
            "Stay warm out there! Layers and a proper hat make cold mornings much more bearable.",
        ),
        (
            "this heat is too much",
            "Hot days can be draining. Keep some water nearby, and if you can, keep the curtains closed during the hottest hours so your place stays cooler.",
        ),
        (
            "grey and drizzly, as usual",
            "Days like that are made for a blanket and something warm to drink.",
        ),
        (
            "foggy morning, couldn't see the end of the street",
            "Foggy mornings are a bit magical, as long as you're not driving in them. Hope it clears up for you.",
        ),
    ],
    "sunny": [
        (
            "finally some sun today",
            "Nice! A bit of sun makes such a difference to the mood. Hope you get to enjoy it.",
        ),
        (
            "weather is lovely today, went for a walk at lunch",
            "That sounds lovely. A walk at lunch is one of the best ways to reset in the middle of the day.",
        ),
        ("blue sky for once!", "Enjoy it while it lasts!"),
        (
            "sat outside with a coffee this morning, so nice",
            "That sounds like a perfect start to the day.",
        ),
    ],
    "food": [
        (
            "just made pasta, nothing fancy",
            "Simple food is often the best food. Sounds like a good evening!",
        ),
        ("ordered pizza, no regrets", "Honestly, no regrets is the right attitude with pizza."),
        (
            "had the best ramen at lunch",
            "Oh, a really good bowl of ramen is hard to beat. Was it a new place?",
        ),
        (
            "trying to eat less sugar this week, going badly",
            "Cutting down on sugar is hard at first; it usually gets easier after the first week or two once your taste adjusts. Keeping fruit or nuts around helps with cravings.",
        ),
        (
            "made a curry from scratch tonight, pretty proud of it",
            "That sounds delicious! Homemade curry is always worth the effort, and it's even better the next day.",
        ),
        (
            "skipped breakfast again oops",
            "Happens to the best of us. Even something small like a banana or yoghurt can help keep your energy up until lunch.",
        ),
        (
            "leftovers for dinner, the dream",
            "Leftovers are underrated. Past you did present you a favour.",
        ),
        (
            "tried a new bakery near work, the croissants are unreal",
            "A good bakery nearby is dangerous in the best way!",
        ),
    ],
    "media": [
        (
            "started a new series last night, already hooked",
            "Oh nice, there's nothing like a series that hooks you from the first episode. What's it about?",
        ),
        (
            "watched a really bad movie, loved it",
            "Sometimes a bad movie is exactly what you need. Half the fun is laughing at it.",
        ),
        (
            "reading a thriller right now, can't put it down",
            "A book you can't put down is the best feeling. If you want recommendations for your next one, tell me what you liked about this one.",
        ),
        (
            "there's a podcast I keep listening to on my commute",
            "Podcasts make commutes so much better. What kind of topics is it?",
        ),
        (
            "rewatching an old show for comfort",
            "Comfort rewatches are underrated. Knowing how it ends is part of the charm.",
        ),
        (
            "been listening to the same album on repeat all week",
            "We all have those weeks! Which album is it?",
        ),
    ],
}

ADVICE: list[tuple[str, str]] = [
    (
        "any tips for falling asleep faster?",
        "A few things that genuinely help for most people:\n\n1. Keep the same wake-up time "
        "every day, even at weekends; it anchors your body clock.\n2. Put screens away 30-60 "
        "minutes before bed, or at least dim them.\n3. Keep the bedroom cool, dark and quiet.\n"
        "4. Avoid caffeine after early afternoon and big meals late in the evening.\n5. If you "
        "can't sleep after 20 minutes, get up and do something calm in low light, then try "
        "again.\n\nIf it keeps going for weeks, it's worth mentioning to a doctor.",
    ),
    (
        "how do I stop procrastinating on boring tasks",
        "Some tricks that work surprisingly well:\n\n- **Make the first step tiny**: 'open the "
        "document' instead of 'write the report'.\n- **Timebox it**: 25 minutes on, 5 off. "
        "Knowing there's an end makes starting easier.\n- **Remove friction**: close tabs, "
        "phone in another room.\n- **Pair it** with something pleasant, like a good playlist.\n"
        "- **Decide the night before** what the first task tomorrow is.\n\nAnd be kind to "
        "yourself: procrastination is usually about the feeling a task gives us, not laziness.",
    ),
    (
        "what's a good quick dinner when I'm too tired to cook",
        "Here are a few low-effort options:\n\n- Eggs any way: an omelette with whatever veg "
        "you have takes 10 minutes.\n- Pasta with garlic, olive oil, chilli and parmesan.\n- A "
        "wrap with hummus, salad and leftover chicken or beans.\n- Fried rice with frozen peas "
        "and an egg.\n- Baked potato in the microwave with beans and cheese.\n\nKeeping a few "
        "staples in the cupboard (pasta, tins, eggs, frozen veg) makes tired evenings much "
        "easier.",
    ),
    (
        "how much should I be saving each month realistically",
        "A common rule of thumb is the 50/30/20 split: about 50% of take-home pay on needs, 30% "
        "on wants and 20% on savings or paying down debt. But the right number depends on your "
        "situation. A good order of priorities:\n\n1. A small emergency buffer first (even one "
        "month of expenses).\n2. Any high-interest debt.\n3. Building the buffer to 3-6 months.\n"
        "4. Longer-term saving and investing.\n\nIf 20% feels impossible, start with 5% and "
        "automate it on payday; the habit matters more than the amount at first.",
    ),
    (
        "is it bad to work out every day",
        "Not necessarily, it depends on what you do. Moving every day is great; hard training "
        "every day without rest is where problems start. A balanced week might have 2-3 harder "
        "sessions, a couple of easier ones (walking, easy cycling, yoga) and at least one "
        "proper rest day. Signs you need more rest: performance dropping, poor sleep, aches "
        "that don't go away, or feeling irritable. Listen to your body and you'll be fine.",
    ),
    (
        "can you recommend a good book? something light",
        "Sure! A few light, enjoyable reads:\n\n- *The House in the Cerulean Sea* by TJ Klune: "
        "warm and funny.\n- *Eleanor Oliphant Is Completely Fine* by Gail Honeyman: quirky, "
        "touching.\n- *A Man Called Ove* by Fredrik Backman: grumpy old man, big heart.\n- *The "
        "Thursday Murder Club* by Richard Osman: cosy mystery.\n\nIf you tell me what you've "
        "enjoyed recently I can narrow it down.",
    ),
    (
        "how do I deal with a coworker who keeps interrupting me in meetings",
        "That's annoying and more common than it should be. A few approaches:\n\n- In the "
        "moment, keep going calmly: 'I'd like to finish this point, then I'm keen to hear your "
        "view.'\n- Ask the meeting lead to give each person space, or to come back to you.\n- "
        "Talk to the coworker privately; sometimes they genuinely don't notice.\n- Send a short "
        "written summary afterwards so your ideas are on record.\n\nIf it continues and it's "
        "affecting your work, it's reasonable to raise it with your manager.",
    ),
    (
        "what should I get a friend for their birthday, they have everything",
        "For the person who has everything, experiences and consumables usually win:\n\n- A "
        "nice dinner out or a cooking class together.\n- Tickets to a show or a gig.\n- Really "
        "good coffee, tea, chocolate or olive oil.\n- A framed photo of a memory you share.\n- A "
        "donation to a cause they care about.\n\nA handwritten card saying what they mean to "
        "you often ends up being the part they remember.",
    ),
    (
        "any ideas for a cheap weekend trip",
        "A few ideas that don't cost much:\n\n- Pick a town a short train ride away and "
        "explore on foot: markets, museums with free entry, a good walk.\n- Book off-peak "
        "trains early, or look at coach travel.\n- Stay in a guesthouse or hostel private room "
        "rather than a hotel.\n- Pack a picnic for one of the days.\n- Look at national parks "
        "or the coast for a hiking weekend.\n\nIf you tell me where you're starting from I can "
        "suggest specific places.",
    ),
    (
        "how do you even start meal prepping",
        "Start small so it sticks:\n\n1. Pick just 2-3 lunches or dinners for the week, not "
        "everything.\n2. Choose recipes that reheat well: chilli, curries, stews, grain bowls, "
        "roast veg.\n3. Shop with a list on one day, cook on the next (Sunday afternoon works "
        "for many people).\n4. Cook a base (rice, roasted veg, a protein) and vary the sauces.\n"
        "5. Get decent containers; it sounds silly but it helps.\n\nAfter a couple of weeks "
        "you'll know what you actually eat and can scale up.",
    ),
    (
        "why am I always so tired in the afternoon",
        "The afternoon slump is very common. Part of it is natural: our body clock dips in the "
        "early afternoon. Things that make it worse are a big carb-heavy lunch, not enough "
        "water, short sleep and sitting still for hours. Try a lighter lunch with some protein, "
        "a 10-minute walk after eating, a glass of water, and daylight if you can get it. If "
        "you're exhausted all the time, it's worth checking with a doctor (iron and thyroid are "
        "common culprits).",
    ),
    (
        "how do I make small talk less awkward",
        "A few things make it much easier:\n\n- Ask open questions: 'How was your weekend?' "
        "instead of 'Good weekend?'\n- Follow up on one detail they mention; people love being "
        "listened to.\n- Share a little about yourself so it's not an interview.\n- Have two "
        "or three easy topics ready: a recent trip, a show, food.\n- It's fine to end it "
        "politely: 'Great chatting, I'll let you get on.'\n\nMost people feel just as awkward, "
        "so a bit of warmth goes a long way.",
    ),
]


DEV = Pool(SMALL_TALK, REPLIES, PAIRED, ADVICE)
