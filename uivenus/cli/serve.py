"""`uivenus serve`: one OpenAI-compatible endpoint for a local checkpoint (or any policy spec)."""

from __future__ import annotations

import typer


def serve(
    policy: str = typer.Option(..., help="Policy spec to serve, e.g. hf:./ckpt?device=cuda&dtype=bfloat16."),
    host: str = typer.Option("127.0.0.1", help="Address to bind (0.0.0.0 exposes it to the network: no auth)."),
    port: int = typer.Option(8000, min=0, max=65535, help="Port to listen on."),
    model_name: str = typer.Option(None, help="Name clients put in `model` (default: ui-venus)."),
    max_batch: int = typer.Option(8, min=1, help="Most requests answered in one batched model call."),
    batch_wait_ms: float = typer.Option(5.0, min=0, help="How long to gather requests into a batch."),
) -> None:
    """Serve POST /v1/chat/completions, GET /v1/models and GET /health; talk to it with
    --policy openai:http://HOST:PORT/v1#MODEL."""
    from uivenus.agent.serve import run_server

    run_server(policy, host, port, model_name, max_batch=max_batch, batch_wait_s=batch_wait_ms / 1000)
