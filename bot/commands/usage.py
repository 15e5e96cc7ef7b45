"""`/usage`: today's tokens and their estimated cost, yours; for operators, everyone's."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.config.model import UsageConfig
from bot.usage.ledger import Tally, UsageRecords, by_model, total
from bot.usage.metered import spent

LISTED_USERS = 20


@dataclass
class UsageCommands:
    """Reads the usage ledger; operators (`IncomingMessage.operator`) see every user."""

    registry: CommandRegistry
    ledger: UsageRecords
    config: RuntimeConfigStore

    def register(self) -> None:
        self.registry.register(Command("usage", "tokens used today and their cost", self.usage))

    async def usage(self, call: CommandCall) -> str:
        config = self.config.current().usage
        mine = self.ledger.today(call.message.user_id)
        lines = [f"Today (UTC): {_amount(mine, config)}"]
        lines += [f"  {model}: {_amount({model: t}, config)}" for model, t in mine.items()]
        lines += _budget_lines(mine, config)
        if call.message.operator:
            lines += self._everyone(config)
        return "\n".join(lines)

    def _everyone(self, config: UsageConfig) -> list[str]:
        everyone = self.ledger.today_all()
        if not everyone:
            return ["All users today: nothing yet."]
        ranked = sorted(everyone.items(), key=lambda entry: -total(entry[1]).tokens)
        lines = [f"All users today ({len(everyone)}): {_amount(by_model(everyone), config)}"]
        lines += [f"  {who}: {_amount(models, config)}" for who, models in ranked[:LISTED_USERS]]
        if len(ranked) > LISTED_USERS:
            lines.append(f"  … and {len(ranked) - LISTED_USERS} more.")
        return lines


def _amount(tallies: dict[str, Tally], config: UsageConfig) -> str:
    summed = total(tallies)
    text = (
        f"{summed.tokens:,} tokens ({summed.prompt_tokens:,} in, {summed.completion_tokens:,} "
        f"out) in {summed.calls:,} call{'' if summed.calls == 1 else 's'}"
    )
    return text + _cost(tallies, config)


def _cost(tallies: dict[str, Tally], config: UsageConfig) -> str:
    unpriced = sorted(model for model in tallies if model not in config.prices)
    if len(unpriced) == len(tallies):
        return ""  # no price known: no estimate at all rather than a misleading zero
    estimate = f", about {spent(tallies, config):.4f} {config.currency}"
    return estimate + (f" (no price for {', '.join(unpriced)})" if unpriced else "")


def _budget_lines(mine: dict[str, Tally], config: UsageConfig) -> list[str]:
    lines = []
    if config.daily_token_budget:
        used = total(mine).tokens
        lines.append(f"Daily budget: {used:,} of {config.daily_token_budget:,} tokens used")
    if config.daily_cost_budget:
        lines.append(
            f"Daily budget: {spent(mine, config):.4f} of {config.daily_cost_budget:g} "
            f"{config.currency} used"
        )
    return lines
