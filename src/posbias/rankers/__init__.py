"""Chunked cross-encoder rankers. The input-geometry checks are importable from here without torch."""

from posbias.rankers.geometry import check_geometry, geometry_limit

__all__ = ["check_geometry", "geometry_limit"]
