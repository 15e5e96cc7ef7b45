"""Every text the bot itself says, in English and Russian, one module per area.

Adding a text is one change here: a `@phrase` function returning `Say(en=..., ru=...)`;
`tests/unit/test_i18n_catalogue.py` finds it on its own (`MODULES` below lists where to look).
"""

from bot.i18n.catalogue import commands, media, memory, notices, reminders, telegram

MODULES = (commands, media, memory, notices, reminders, telegram)
