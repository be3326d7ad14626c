"""The long-document study's config sections, one module each (the analysis stages' sections live in their
stage folders: posbias/<stage>/config.py). Every module declares `SECTION`; `posbias.config.registry` lists them."""
