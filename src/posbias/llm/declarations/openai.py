"""The OpenAI APIs and OpenAI-compatible servers (`posbias.llm.backends.openai_api`)."""

from posbias.llm.declaration import BackendDeclaration

BACKENDS = (
    BackendDeclaration("openai_chat", "posbias.llm.backends.openai_api:OpenAIChat",
                       "the OpenAI chat API (or a server at base_url)", key_env="OPENAI_API_KEY"),
    BackendDeclaration("openai_completions", "posbias.llm.backends.openai_api:OpenAICompletions",
                       "an OpenAI-compatible server's raw /v1/completions (vLLM, llama.cpp server), for base models "
                       "and exact wrappers", key_env="OPENAI_API_KEY"),
)
