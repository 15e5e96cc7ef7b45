"""Reminders: set by the model or `/reminders`, kept on disk, delivered by a scheduler
without an LLM call (docs/REMINDERS.md)."""

from bot.reminders.book import ReminderBook
from bot.reminders.model import Reminder, ReminderRefused
from bot.reminders.service import ReminderDesk, Requester

__all__ = ["Reminder", "ReminderBook", "ReminderDesk", "ReminderRefused", "Requester"]
