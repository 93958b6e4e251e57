"""A minimal Runner for the real-host suite: prompt from the host (`get_prompt`, i.e. the
default_prompt after PromptPreProcessing), naive RAG over the configured knowledge bases
(like LangBot's local agent), the user's text, one call to the (fake) model.

`tool <name> <json>` in the user text calls that tool instead of the model, so the suite
can check a MemVault tool inside a real run."""

import json

import probe_log
from langbot_plugin.api.definition.components.runner.runner import Runner
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.runner.result import RunnerResult


class SuiteRunner(Runner):
    async def run(self, ctx):  # noqa: ANN001, ANN201 - SDK signature
        api = ctx.api
        text = ctx.input.to_text()
        if text.startswith("tool "):
            name, _, raw = text[len("tool ") :].partition(" ")
            tools = [t["name"] for t in await api.list_tools()]
            chosen = next((t for t in tools if t == name or t.endswith(name)), name)
            # The SDK's traced call_tool (0.7.16) rejects a tool's plain-string result while
            # recording it (ToolCallCompletedPayload.result must be a dict); every SDK Tool
            # returns a string, so call the untraced proxy underneath.
            untraced = getattr(api, "_api", api)
            try:
                result = await untraced.call_tool(chosen, json.loads(raw or "{}"))
                error = None
            except Exception as exc:  # noqa: BLE001 - recorded for the suite
                result, error = None, repr(exc)
            probe_log.write(
                "tool", run_id=ctx.run_id, tools=tools, name=chosen, result=result, error=error
            )
            reply = Message(
                role="assistant", content=f"TOOL-RESULT {json.dumps(result, default=str)[:400]}"
            )
            yield RunnerResult.message_completed(ctx.run_id, reply)
            yield RunnerResult.run_completed(ctx.run_id)
            return
        prompt = await api.get_prompt()
        messages = [Message.model_validate(m) for m in prompt]
        rag = []
        for kb_id in ctx.config.get("knowledge-bases") or []:
            try:
                entries = await api.retrieve_knowledge(kb_id, text, top_k=3)
                rag.append({"kb": kb_id, "texts": [probe_log.text_of(e) for e in entries]})
            except Exception as exc:  # noqa: BLE001 - recorded for the suite
                rag.append({"kb": kb_id, "error": repr(exc)})
        rag_texts = [t for item in rag for t in item.get("texts", [])]
        if rag_texts:
            messages.append(Message(role="system", content="Knowledge:\n" + "\n".join(rag_texts)))
        messages.append(Message(role="user", content=text))
        reply = await api.invoke_llm(ctx.config.get("model"), messages)
        probe_log.write(
            "runner",
            run_id=ctx.run_id,
            user_text=text,
            rag=rag,
            sent=[{"role": m.role, "text": probe_log.text_of(m)} for m in messages],
            reply=probe_log.text_of(reply),
        )
        yield RunnerResult.message_completed(ctx.run_id, reply)
        yield RunnerResult.run_completed(ctx.run_id)
