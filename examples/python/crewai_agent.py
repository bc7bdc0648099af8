"""CrewAI behind agent-judge: `python examples/python/crewai_agent.py` with `agent-judge dev` running
(`pip install "agent-judge[crewai]"`). The model is a scripted OpenAI-compatible server started here on loopback (no
API key); put a real `LLM(model=...)` in its place.

The agent calls `deploy`: a person decides (`agent-judge decide <id> approve --approver you`, with `dev` started as
AGENT_JUDGE_APPROVERS=you). CrewAI has no resumable tool interruption, so the model reads "pending, not performed
yet" and calls `deploy` again a few seconds later; agent-judge, asked again, decides whether it runs. The scripted
model gives up after about two minutes."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from _settings import gate_settings
from crewai import LLM, Agent, Crew, Task
from crewai.tools import tool

from agent_judge.crewai import with_agent_judge


@tool("deploy")
def deploy(service: str) -> str:
    """Deploy a service to production."""
    print(f"*** deploying {service} ***")
    return f"deployed {service}"


def scripted_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Calls deploy until a tool result says it was deployed (or after 40 tries), then answers."""
    results = [str(m.get("content")) for m in messages if m.get("role") == "tool"]
    if results:
        print(results[-1])
    if any(r.startswith("deployed") for r in results) or len(results) >= 40:
        return {"role": "assistant", "content": results[-1] if results else "done"}
    if results:
        time.sleep(3)  # a pending answer: ask again a little later
    call = {"id": f"c{len(results)}", "type": "function", "function": {"name": "deploy", "arguments": '{"service": "billing"}'}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class ChatCompletions(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        message = scripted_reply(body["messages"])
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        raw = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), ChatCompletions)
threading.Thread(target=server.serve_forever, daemon=True).start()
llm = LLM(model="openai/scripted", base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="not-used")

url, token = gate_settings()
agent = Agent(
    role="release engineer",
    goal="deploy what the user asks",
    backstory="You deploy services.",
    llm=llm,
    tools=with_agent_judge([deploy], url=url, token=token, hold_ms=5000),  # the one line
    max_iter=45,
)
task = Task(description="Deploy billing.", expected_output="what happened", agent=agent)
print(Crew(agents=[agent], tasks=[task]).kickoff())
server.shutdown()
