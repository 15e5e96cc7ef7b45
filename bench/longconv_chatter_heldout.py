# ruff: noqa: E501 (a reply is one string, as the model wrote it)
"""The test split's small talk: the same kinds of lines as `bench/longconv_chatter.py`, in the
same style and at the same lengths, written separately so that no line of it is in dev.

Nothing the bot does may be tuned on these lines: the test conversations draw their greetings,
reactions, moods, weather, food and media remarks, advice questions and the assistant's
replies from here, so the test split measures small-talk handling on words it never saw.
"""

from __future__ import annotations

from bench.longconv_chatter import Pool

HELD_OUT = Pool(
    small_talk={
        "greet": [
            "hey there",
            "hi!",
            "morning :)",
            "me again",
            "evening!",
            "hey, got a minute?",
            "back again lol",
            "hellooo",
            "hi hi",
            "sup",
            "hey, quick one",
            "oh hey",
        ],
        "small": [
            "haha yeah",
            "makes sense I suppose",
            "ok that works",
            "totally",
            "lmao",
            "alright",
            "maybe, we'll see",
            "yep, got it",
            "oh cool",
            "huh, didn't know that",
            "thanks, really useful",
            "let me mull it over",
            "exactly what I thought",
            "honestly no clue",
            "me too to be honest",
            "good point",
            "right right",
            "that's handy actually, cheers",
            "still deciding",
            "ah ok, noted",
            "mhm",
            "sure thing",
        ],
        "bye": [
            "right, I'm off",
            "gn!",
            "catch you later",
            "thanks, that's all for now",
            "bedtime for me",
            "ok done for today",
            "ta, speak soon",
            "have to dash, thank you!",
        ],
    },
    replies={
        "greet": [
            "Hi! Nice to see you. What's up today?",
            "Hey! I'm all ears. What would you like to talk about?",
            "Good to have you back! Anything on your plate today?",
            "Hello! How has your week been treating you?",
            "Hey, welcome back! What's new?",
        ],
        "small": [
            "Makes sense!",
            "Of course. Just shout if you want to come back to it.",
            "Ha, I get that.",
            "Noted.",
            "Absolutely. Anything else you'd like to go over?",
            "Yep.",
            "Take your time.",
        ],
        "aside": [
            "Ha, classic!",
            "That gave me a little laugh.",
            "Always something going on, isn't there!",
            "Ha! That's quite the image.",
            "Oh dear, haha. Fingers crossed it settles down!",
        ],
        "mood": [
            "That sounds draining. I hope you can carve out a little time for yourself soon; even a quiet cup of tea without your phone can help you reset.",
            "Oh, I can picture it. Hang on in there!",
            "Ugh. Small annoyances really pile up over a day. Is there anything I can take off your plate?",
            "Sounds exhausting. Go easy on yourself tonight.",
        ],
        "food": [
            "Yum, that sounds great!",
            "A good meal can turn a whole day around. Enjoy it!",
            "Ooh, tell me more, what was on the plate?",
        ],
        "weather": [
            "Oof, that sort of weather makes it hard to get going. Keep warm!",
            "Funny how much the weather changes the feel of a day, isn't it?",
        ],
        "bye": [
            "See you soon, take care!",
            "Bye! Have a nice evening.",
            "Catch you later, I'm here whenever you want to chat.",
            "Enjoy the rest of your day!",
            "Speak soon! Look after yourself.",
        ],
        "good": [
            "Congratulations, that's brilliant news! It sounds like all your effort has paid off, and you deserve to enjoy this for a bit. Big news like this often brings a wave of things to organise, so don't feel you have to tackle everything at once. Is there anything coming up that you'd like a hand preparing for?",
            "Oh, how lovely! That's the kind of thing worth remembering. Tell me more if you feel like it, I'd love the full story. And if there's something to plan around it, like dates, tickets or a to-do list, I'm glad to help you sort it out.",
            "That's really good to hear. You've had a busy stretch, so it's great that something has gone your way. Are you doing anything to mark it? Even a small treat counts.",
            "Brilliant, congratulations! You must be over the moon. How does it feel now that it's real?",
            "Oh, wonderful! Sounds like things are falling into place. Anything you need to get sorted next?",
            "That's fantastic! So pleased for you. Let me know if you'd like a hand planning anything.",
            "Such good news. Moments like this are worth pausing on, so I hope you get to celebrate a bit.",
        ],
        "bad": [
            "I'm so sorry, that sounds really stressful. Something like this can knock the whole week sideways, so try not to be too hard on yourself if other things fall behind. If it helps, we could sort it into what needs handling now, what can wait, and who might be able to help. And please get some rest too.",
            "Oh no, what bad timing. These things always seem to happen when you have the least energy for them. Is it dealt with now, or is something still hanging over you? I'm happy to help you weigh up the options, or just listen if you need to let off steam.",
            "I'm sorry, that's a tough one. It's completely normal to feel shaken by it. Would you like to talk about it, or would some practical suggestions be more useful?",
            "Ugh, that's annoying. I hope it gets resolved soon. Anything I can help you look up?",
            "That's a lot on your shoulders. Make sure you look after yourself while you deal with it; everything feels harder when you're worn out.",
        ],
        "news": [
            "Thanks for keeping me posted! That's a fair bit of change all at once. How are you feeling about it: mostly excited, mostly nervous, or somewhere in between? If there's anything practical to keep on top of, like forms, planning or just a list, I'm happy to help.",
            "Ah, thanks for letting me know. Sounds like things are moving. Keep me updated; I'm curious how it turns out, and if you want a second pair of eyes on anything, just say.",
            "Thanks for the update! Got it. How do you feel about that?",
            "Okay, noted. That's quite a shift. How is it going so far?",
            "Oh, interesting! Fill me in when you've got a moment, I'd love to hear more.",
            "Right, good to know. Tell me if it changes anything I can help with.",
            "Ooh, nice. You've got a lot going on right now!",
        ],
        "plan": [
            "How exciting! A few practical tips that save headaches later: add the dates to your calendar with reminders well in advance, check what needs booking or paying for early, and keep every confirmation together in one folder. If other people are involved, a shared list or group chat keeps everyone in sync. Shall I help you put together a checklist or a timeline?",
            "Sounds like a solid plan. When other people are part of it, it's worth agreeing the main points early (dates, money, who handles what) and leaving a bit of flexibility, because things tend to shift. If anything changes, let me know and we can rework it together.",
            "That sounds like a good plan. What usually helps: note the key dates where you'll see them, book anything that fills up early, and leave a little buffer in case things move. Want me to draft a checklist with you?",
            "Lovely, something to look forward to! I can help with a rough plan or a list of things to get ready if you like.",
            "Plans shifting happens all the time, no need to stress. Just make sure everyone involved hears about it early, and double-check any bookings or deposits so you don't lose anything.",
        ],
    },
    paired={
        "mood": [
            (
                "barely slept last night, I'm a zombie",
                "Oh no. Some daylight and a glass of water can help you get through the day, and try for an early night. Anything on your mind keeping you awake?",
            ),
            (
                "actually feeling quite upbeat",
                "Love to hear it! Did something nice happen?",
            ),
            (
                "this week has been endless",
                "Endless weeks are the worst. Try to pick one small thing to finish and call that a win; it often makes the rest feel lighter.",
            ),
            (
                "totally drained, can't think straight",
                "Sounds like you need an easy evening. Something simple to eat, something silly to watch, and an early night.",
            ),
            (
                "no idea why but I'm in a great mood",
                "Make the most of it! Good moods don't need a reason.",
            ),
            (
                "bit overwhelmed at the moment",
                "Sorry it's a lot right now. Would it help to write down everything on your plate? Seeing it on paper often makes it smaller, and we can work out what can wait.",
            ),
            (
                "all I want is my bed and a blanket",
                "Honestly, that sounds like exactly the right plan. Rest counts.",
            ),
            (
                "think I overdid the espresso, I'm buzzing",
                "Too much espresso can leave you feeling wired. Some water and a bit of a walk should help you come down. Maybe skip the next one!",
            ),
            (
                "got a bit of a sore throat, probably nothing",
                "Sorry to hear that. Warm drinks, honey and some rest usually help. If it hangs around or gets worse, it's worth getting it looked at.",
            ),
            (
                "surprisingly decent day",
                "That's great. Nice when a day turns out better than you thought it would.",
            ),
            (
                "ugh, not my day",
                "Some days are just like that. Go easy on yourself; tomorrow's a new one.",
            ),
            (
                "I really need a break from everything",
                "It sounds like a proper rest is overdue! Even a couple of days with nothing planned can work wonders. Is there somewhere you'd love to go?",
            ),
            (
                "my concentration is shot",
                "Happens to everyone. Try working in short bursts, 15-20 minutes, then a quick break. And if it's really not coming, that's fine too.",
            ),
        ],
        "weather": [
            (
                "rain all day, again",
                "Ugh, wet days drag on. Good excuse for a hot drink and a cosy evening in, though.",
            ),
            (
                "the wind nearly knocked me off my bike",
                "Yikes, strong wind and bikes don't mix well. Glad you made it in one piece!",
            ),
            (
                "frost on the windows this morning",
                "Brr! Wrap up warm: a scarf and gloves make cold mornings so much easier.",
            ),
            (
                "way too hot to do anything",
                "Heat like that really saps your energy. Keep water close and the blinds down in the afternoon to keep your place cooler.",
            ),
            (
                "dull and damp out, the usual",
                "Perfect weather for a blanket and a warm drink.",
            ),
            (
                "thick fog out there, couldn't see a thing",
                "Fog can be quite atmospheric, as long as you're not out driving in it. Hope it lifts soon.",
            ),
        ],
        "sunny": [
            (
                "sun's out at last",
                "Lovely! A bit of sunshine lifts everything. Hope you get outside for a bit.",
            ),
            (
                "gorgeous out, ate my lunch in the park",
                "That sounds perfect. Lunch outside is such a good way to break up the day.",
            ),
            ("not a cloud in the sky!", "Make the most of it!"),
            (
                "had my breakfast on the balcony, bliss",
                "What a nice way to start the morning.",
            ),
        ],
        "food": [
            (
                "made a quick stir fry, nothing special",
                "Quick and simple is often the best kind of dinner. Sounds like a nice evening!",
            ),
            (
                "got takeaway curry, zero guilt",
                "Exactly the right amount of guilt for a takeaway curry.",
            ),
            (
                "had amazing dumplings for lunch",
                "Oh, good dumplings are hard to beat. Somewhere new?",
            ),
            (
                "trying to cut back on crisps, it's not working",
                "Cutting back on snacks is tough at first; it tends to get easier after a week or two. Having something crunchy but lighter around, like carrots or popcorn, helps.",
            ),
            (
                "baked bread for the first time, it actually rose",
                "Congrats! Homemade bread is so satisfying, and nothing beats the smell.",
            ),
            (
                "forgot to eat lunch, whoops",
                "Easy to do on a busy day. Even a quick snack like an apple or some nuts keeps you going till dinner.",
            ),
            (
                "cheese on toast for dinner, living the dream",
                "Cheese on toast is a classic for a reason.",
            ),
            (
                "there's a new coffee place by the station, their cinnamon buns are dangerous",
                "A great bakery on your way is both a blessing and a curse!",
            ),
        ],
        "media": [
            (
                "binged half a season last night oops",
                "Ha, that's the sign of a good show. What are you watching?",
            ),
            (
                "saw the worst film ever made, had a blast",
                "Terrible films can be the most fun to watch. Laughing at them is half the joy.",
            ),
            (
                "halfway through a murder mystery and I need to know who did it",
                "That's the best part of a good mystery. If you want suggestions for what to read next, tell me what you like about this one.",
            ),
            (
                "found a new podcast for my walks",
                "A good podcast makes a walk fly by. What's it about?",
            ),
            (
                "putting on an old sitcom to switch off",
                "Old favourites are perfect for switching off. No surprises, just comfort.",
            ),
            (
                "can't stop playing this one song",
                "We all get stuck on a song sometimes! Which one?",
            ),
        ],
    },
    advice=[
        (
            "what helps when you wake up at 4am and can't get back to sleep",
            "That's frustrating, and very common. A few things that help:\n\n1. Don't check the time "
            "or your phone; it wakes the brain up.\n2. Try slow breathing, like 4 seconds in and 6 "
            "out, for a few minutes.\n3. If you're still awake after 20 minutes, get up, sit "
            "somewhere dim and read something dull, then go back to bed.\n4. Keep your wake-up time "
            "the same the next day, even if you're tired.\n\nIf it happens most nights for weeks, "
            "it's worth talking to a doctor.",
        ),
        (
            "how do I get motivated to clean the house",
            "A few ways to get going:\n\n- **Set a timer** for 15 minutes and stop when it rings; "
            "starting is the hard part.\n- **One room or one surface** at a time, not the whole "
            "house.\n- **Put on music or a podcast** you only allow yourself while cleaning.\n- "
            "**Make a tiny list** and tick things off.\n- **Tidy before cleaning**: clearing "
            "clutter first makes the rest quicker.\n\nAnd a little every day beats a huge session "
            "once a month.",
        ),
        (
            "give me an easy lunch idea I can take to work",
            "Some easy ones that travel well:\n\n- A grain salad: couscous or quinoa with chickpeas, "
            "cucumber, feta and lemon.\n- Leftover pasta bake, reheated.\n- A wrap with hummus, "
            "grated carrot and falafel.\n- Soup in a flask with a bit of bread.\n- Overnight noodles "
            "with peanut sauce and veg.\n\nMaking a big batch on Sunday covers several days.",
        ),
        (
            "is it worth having a budget app or is a spreadsheet enough",
            "Either works; the best one is the one you'll actually keep up. A spreadsheet is free "
            "and flexible but needs you to enter things yourself. An app can pull in transactions "
            "automatically and show where the money goes, which helps if you tend to forget. A "
            "simple approach:\n\n1. Track everything for one month, however you like.\n2. Sort it "
            "into a few categories.\n3. Set a limit for the two or three that surprise you.\n\n"
            "If you try an app, check what data it can access and what it costs after the trial.",
        ),
        (
            "how many rest days should I take when running",
            "For most recreational runners, one or two rest days a week is a good starting "
            "point. Easy runs, walking or stretching can fill other days. Increase your weekly "
            "distance slowly, roughly 10% at a time, and mix easy runs with the odd harder one. "
            "Warning signs that you need more rest: heavy legs that don't recover, niggles that "
            "keep coming back, worse sleep, or losing the fun of it.",
        ),
        (
            "any podcast recommendations for a long drive",
            "A few that make hours disappear:\n\n- *Serial*: the classic true-crime series.\n- "
            "*No Such Thing As A Fish*: funny, odd facts.\n- *Radiolab*: science stories told "
            "beautifully.\n- *Desert Island Discs*: long interviews with music.\n\nTell me what you "
            "usually enjoy and I can suggest a few more.",
        ),
        (
            "how do I say no to extra work without sounding lazy",
            "It's a skill, and it gets easier with practice. Some approaches:\n\n- Be clear about "
            "what's already on your plate: 'I'm on X and Y this week.'\n- Offer a choice: 'I can "
            "take this if Z moves to next week; which matters more?'\n- Offer a smaller version or "
            "a later date.\n- Keep it short and friendly; long explanations sound defensive.\n\n"
            "Protecting your time makes the work you do take on better, and most managers know it.",
        ),
        (
            "what's a nice housewarming present that isn't a candle",
            "Some ideas beyond candles:\n\n- A good plant that is hard to kill, like a pothos or "
            "a snake plant.\n- A nice bottle of olive oil and some local bread.\n- A set of good "
            "tea towels or a cosy throw.\n- A framed print or map of their new neighbourhood.\n- "
            "A voucher for a local restaurant so they can explore.\n\nA short card wishing them "
            "happy times in the new place goes a long way.",
        ),
        (
            "where could I go for a few days on a small budget",
            "Some budget-friendly ideas:\n\n- A nearby city you've never properly explored, with "
            "free museums and walking tours.\n- A coastal town out of season: cheaper rooms and "
            "quiet beaches.\n- Camping or a cabin near a national park.\n- Off-peak trains or "
            "coaches booked a few weeks ahead.\n- Self-catering so you're not eating out every "
            "meal.\n\nIf you tell me where you'd be travelling from, I can be more specific.",
        ),
        (
            "how do I batch cook without getting bored of the food",
            "The trick is to cook components rather than whole meals:\n\n1. Make one or two "
            "bases: rice, roasted potatoes, lentils.\n2. Cook a protein or two that works in "
            "different dishes.\n3. Keep a few sauces on hand: pesto, curry paste, tahini dressing."
            "\n4. Mix and match through the week so no two days are the same.\n5. Freeze some "
            "portions for later instead of eating the same thing five days running.\n\nIt "
            "takes a couple of weeks to find your rhythm.",
        ),
        (
            "why do I get so sleepy after lunch",
            "Post-lunch sleepiness is really common. Your body clock naturally dips in the early "
            "afternoon, and a large meal heavy on white bread, pasta or sugar makes it stronger. "
            "A few things help: a lighter lunch with protein and veg, a short walk afterwards, "
            "enough water, and getting some daylight. If you feel wiped out all day, every day, "
            "a check-up is a good idea.",
        ),
        (
            "how do I keep a conversation going at a party when I don't know anyone",
            "A few easy tricks:\n\n- Start with the setting: 'How do you know the host?'\n- Ask "
            "follow-up questions about what they say rather than jumping to a new topic.\n- Share "
            "a small story of your own so it's a conversation, not an interview.\n- Keep a couple "
            "of topics in your pocket: travel, food, something you've watched.\n- Joining a small "
            "group is often easier than a single person.\n\nMost people are relieved when someone "
            "else makes the first move.",
        ),
    ],
)
