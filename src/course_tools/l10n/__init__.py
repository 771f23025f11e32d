"""Translating the lessons with gettext catalogs, keyed by cell id.

The English notebooks are the source. ``units`` cuts their markdown into paragraphs,
``catalogs`` extracts them into templates and merges templates into each language's
catalog the way msgmerge does, but only ever within one cell.
"""
