"""The current date and time, which a model cannot know by itself."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field

from bot.tools.registry import ToolContext


class CurrentTimeArguments(BaseModel):
    timezone: str = Field("UTC", description="IANA time zone, e.g. Europe/Berlin or UTC.")


class CurrentTimeTool:
    name = "current_time"
    description = "Current date, time and weekday in a given IANA time zone (default UTC)."
    arguments = CurrentTimeArguments

    async def run(self, args: CurrentTimeArguments, context: ToolContext) -> str:
        try:
            zone = ZoneInfo(args.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            return f"Error: unknown time zone '{args.timezone}'; use an IANA name (Europe/Paris)."
        now = datetime.now(zone)
        return f"{now:%Y-%m-%d %H:%M:%S} {now.tzname()} ({now:%A}), time zone {args.timezone}"
