"""`/usage`: today's tokens and their estimated cost, yours; for operators, everyone's."""

from __future__ import annotations

from dataclasses import dataclass

from bot.commands.registry import Command, CommandCall, CommandRegistry
from bot.config import RuntimeConfigStore
from bot.config.model import UsageConfig
from bot.i18n.catalogue import commands as texts
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
        self.registry.register(Command("usage", texts.about_usage.say(), self.usage))

    async def usage(self, call: CommandCall) -> str:
        current = self.config.current()
        config = current.usage
        mine = await self.ledger.today(call.message.user_id)
        lines = [texts.usage_today(_amount(mine, config))]
        lines += [f"  {model}: {_amount({model: t}, config)}" for model, t in mine.items()]
        cut = total(mine).cut
        if cut:
            lines.append(texts.usage_cut_answers(cut))
        lines += _budget_lines(mine, config)
        unpriced = sorted(
            model for model in mine or [current.llm.model] if model not in config.prices
        )
        if unpriced:  # say where a cost comes from, rather than leave it out unexplained
            lines.append(texts.usage_how_to_price(", ".join(unpriced)))
        if call.message.operator:
            lines += await self._everyone(config)
        return "\n".join(lines)

    async def _everyone(self, config: UsageConfig) -> list[str]:
        everyone = await self.ledger.today_all()
        if not everyone:
            return [texts.usage_nobody_yet()]
        ranked = sorted(everyone.items(), key=lambda entry: -total(entry[1]).tokens)
        lines = [texts.usage_everyone(len(everyone), _amount(by_model(everyone), config))]
        lines += [f"  {who}: {_amount(models, config)}" for who, models in ranked[:LISTED_USERS]]
        if len(ranked) > LISTED_USERS:
            lines.append(texts.usage_more_users(len(ranked) - LISTED_USERS))
        return lines


def _amount(tallies: dict[str, Tally], config: UsageConfig) -> str:
    summed = total(tallies)
    text = texts.usage_amount(
        summed.tokens, summed.prompt_tokens, summed.completion_tokens, summed.calls
    )
    return text + _cost(tallies, config)


def _cost(tallies: dict[str, Tally], config: UsageConfig) -> str:
    unpriced = sorted(model for model in tallies if model not in config.prices)
    if len(unpriced) == len(tallies):
        return ""  # no price known: no estimate at all rather than a misleading zero
    estimate = texts.usage_cost(f"{spent(tallies, config):.4f}", config.currency)
    return estimate + (texts.usage_unpriced(", ".join(unpriced)) if unpriced else "")


def _budget_lines(mine: dict[str, Tally], config: UsageConfig) -> list[str]:
    lines = []
    if config.daily_token_budget:
        used = total(mine).tokens
        lines.append(texts.usage_token_budget(used, config.daily_token_budget))
    if config.daily_cost_budget:
        lines.append(
            texts.usage_cost_budget(
                f"{spent(mine, config):.4f}", f"{config.daily_cost_budget:g}", config.currency
            )
        )
    return lines
