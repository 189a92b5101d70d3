"""The assets, one folder per domain, loaded by ``dg.load_from_defs_folder`` (definitions.py).

Each folder is an asset group: the folder names the group shown in the UI, and its
``__init__.py`` names the group's owner (``OWNER``). A new domain is a new folder; nothing
else lists the groups. ``_metadata`` holds the helpers every group shares."""
