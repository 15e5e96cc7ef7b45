"""No key reaches a log, a reply (`/status` included) or a file under the data dir, and no
other local user can read the data dir."""

import os
import stat

from tests.fakes.openai_server import Reply
from tests.system.harness import SECRETS

FAY = 9101


def test_no_secret_shows_in_logs_replies_or_data_files(make_stack, shared_lightrag):
    stack = make_stack(shared_lightrag, allowed=[FAY], log_level="DEBUG")
    stack.converse(FAY, "My API gateway lives at gw.example.org behind Cloudflare, remember that.")
    status = stack.ask(FAY, "/status")
    assert "Model:" in status and "LightRAG: healthy" in status

    stack.llm_server.script(Reply(status=401))  # the LLM refuses the key: said, but not shown
    assert "OPENAI_API_KEY" in stack.ask(FAY, "Does the model still accept us?")
    stack.rag.mode = "down"  # LightRAG fails: logged, without its key
    # The question the LLM refused is still unanswered: it goes with this one, joined.
    stack.say(FAY, "Is long-term memory still there?")
    joined = "echo: Does the model still accept us?\n\nIs long-term memory still there?"
    stack.telegram.wait_for_sync(lambda: joined in stack.replies(FAY), 30)
    stack.rag.mode = "forward"
    stack.wait_queue_empty()
    assert stack.bot.stop() == 0

    replies = "\n".join(stack.replies(FAY))
    files = {
        str(path): path.read_bytes().decode("utf-8", "replace")
        for path in stack.workdir.rglob("*")
        if path.is_file() and path.name != ".env"
    }
    assert any("data/sessions" in name for name in files), "the data dir was searched"
    for secret in SECRETS:
        assert secret not in replies, "a reply shows a secret"
        for name, text in files.items():
            assert secret not in text, f"{name} holds a secret"
    for path in [stack.data, *stack.data.rglob("*")]:
        wanted = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(os.lstat(path).st_mode) == wanted, f"{path} is readable by others"
