"""Completion as the user types: inline completion (fill-in-the-middle) and
next-edit suggestions, from the model the user runs.

``window.py`` the text around the cursor and the stop rule; ``wires.py`` the
FIM endpoints (OpenAI-compatible ``/completions``, Ollama's ``/api/generate``,
Mistral's ``/fim/completions``, DeepSeek's beta completions) and the chat
prompt that asks for the middle; ``model.py`` the completion model (chosen
like the chat's, its own settings over them), ``completer.py`` the
debounced, cached, one-in-flight-per-document completer; ``nes.py`` the
next-edit suggestions (the edit history, the Zeta prompt, the minimal
edits). *Imports:* engine, providers, tools (the confinement's rules).
*Invariant:* no transport: the server wires it to LSP; a protected file's
text (``.env``, keys) never reaches a model.
"""
