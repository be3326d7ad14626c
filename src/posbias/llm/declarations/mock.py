"""The deterministic stand-in for tests (`posbias.llm.backends.mock`)."""

from posbias.llm.declaration import BackendDeclaration

BACKENDS = (
    BackendDeclaration("mock", "posbias.llm.backends.mock:MockBackend",
                       "a deterministic stand-in for tests (model: oracle, order_biased, first_item, u_curve, echo, "
                       "identity or reverse)"),
)
