"""The Anthropic Messages API (`posbias.llm.backends.anthropic_api`)."""

from posbias.llm.declaration import BackendDeclaration

BACKENDS = (
    BackendDeclaration("anthropic_messages", "posbias.llm.backends.anthropic_api:AnthropicMessages",
                       "the Anthropic Messages API", key_env="ANTHROPIC_API_KEY"),
)
