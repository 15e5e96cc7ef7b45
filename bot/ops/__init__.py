"""Operating the bot: the optional HTTP listener with `/healthz`, `/readyz` and `/metrics`."""
