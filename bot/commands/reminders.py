"""`/reminders`: this chat's reminders; `/reminders cancel <id>`; `/reminders timezone <zone>`.

Plain text, so it works the same in every channel; no LLM call; in the asker's language
(`bot/i18n/catalogue/reminders.py`). In a group, anyone allowed
sees the chat's reminders, and cancels their own (the bot's operators: any).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.i18n.catalogue import reminders as say
from bot.i18n.catalogue.commands import about_reminders
from bot.reminders import ReminderDesk, ReminderRefused, Requester


@dataclass
class ReminderCommands:
    registry: CommandRegistry
    desk: ReminderDesk

    def register(self) -> None:
        self.registry.register(
            Command("reminders", about_reminders.say(), self.reminders, private_in_groups=True)
        )

    async def reminders(self, call: CommandCall) -> str:
        message = call.message
        who = Requester(message.address, message.user_id, message.in_group, message.operator)
        verb, _, rest = call.args.partition(" ")
        try:
            if not verb:
                return await self.desk.listing(who)
            if verb.lower() == "cancel" and rest.strip():
                reminder = await self.desk.cancel(who, rest)
                return say.reminder_cancelled(reminder.id, reminder.text)
            if verb.lower() in ("timezone", "tz"):
                return await self._timezone(who, rest.strip())
        except ReminderRefused as exc:
            return str(exc)
        return say.reminders_usage()

    async def _timezone(self, who: Requester, name: str) -> str:
        if not name:
            zone = await self.desk.zone_of(who.user_id)
            return say.timezone_is(zone.key, await self.desk.now_for(who.user_id))
        zone = await self.desk.set_zone(who.user_id, name)
        return say.timezone_set(zone.key, await self.desk.now_for(who.user_id))
