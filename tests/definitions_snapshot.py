"""What the Definitions expose to users, as plain data: asset keys with their groups,
partitions and table kinds, checks (and whether they block), jobs with their selections,
sensors, schedules, resources and the CLI's commands. `test_definitions.py` compares it with
`definitions_snapshot.json`, taken before the layout moved (issue 12), so a restructuring that
renames, regroups or drops anything a user sees fails. Regenerate (only for an intended change):
    python tests/definitions_snapshot.py > tests/definitions_snapshot.json
"""

import json


def _partitions(pdef) -> object:
    if pdef is None:
        return None
    import dagster as dg

    if isinstance(pdef, dg.MultiPartitionsDefinition):
        return {d.name: sorted(d.partitions_def.get_partition_keys()) for d in pdef.partitions_defs}
    return sorted(pdef.get_partition_keys())


def snapshot() -> dict:
    from resumebias_dagster.cli import build_parser
    from resumebias_dagster.definitions import defs

    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "partitions": _partitions(node.partitions_def),
            "deps": sorted(p.to_user_string() for p in node.parent_keys),
            "kinds": sorted(node.kinds),
            "code_version": node.code_version,
            "automation": node.automation_condition is not None,
        }
    checks = {}
    for check_key in sorted(graph.asset_check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name)):
        spec = graph.get_check_spec(check_key)
        checks[f"{check_key.asset_key.to_user_string()}:{check_key.name}"] = {"blocking": bool(spec.blocking)}
    jobs = {}
    for job in defs.resolve_all_job_defs():
        if job.name.startswith("__"):
            continue
        selection = job.asset_layer.executable_asset_keys if job.asset_layer else set()
        jobs[job.name] = sorted(k.to_user_string() for k in selection)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {
        "assets": assets,
        "checks": checks,
        "jobs": jobs,
        "sensors": sorted(s.name for s in defs.sensors or []),
        "schedules": sorted(s.name for s in defs.schedules or []),
        "resources": sorted((defs.resources or {}).keys()),
        "cli_commands": sorted(sub.choices),
    }


if __name__ == "__main__":
    print(json.dumps(snapshot(), indent=1, sort_keys=True))
