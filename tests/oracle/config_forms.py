"""The same queue tree in the configuration forms 1-3 of SPEC §3 (document
layout from docs/config.md), each followed by a `kind: Cluster` document:
`hdrf simulate` must give the same answer whichever form it reads."""

import yaml


def _queues(doc):
    """path -> entry for every queue of a §10 document, parents included."""
    out = {}
    for entry in doc.get("queues") or []:
        out[entry["path"]] = dict(entry)
    for path in list(out):
        parts = path.split("/")
        for depth in range(2, len(parts)):
            out.setdefault("/".join(parts[:depth]), {"path": "/".join(parts[:depth])})
    return out


def _fields(entry):
    """The queue fields beside path and weight."""
    return {k: v for k, v in entry.items() if k not in ("path", "weight")}


def form1(doc):
    queues = _queues(doc)
    docs = []
    for path in sorted(queues):
        entry = queues[path]
        parts = path.split("/")
        weights = [str(queues.get("root", {}).get("weight", 1))] + \
            [str(queues["/".join(parts[:d])].get("weight", 1)) for d in range(2, len(parts) + 1)]
        spec = {}
        for key, value in _fields(entry).items():
            spec[key] = {"resource": value} if key == "guarantee" else value
        docs.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                     "metadata": {"name": parts[-1],
                                  "annotations": {"volcano.sh/hierarchy": path,
                                                  "volcano.sh/hierarchy-weights":
                                                      "/".join(weights)}},
                     "spec": spec})
    if "cluster" in doc:
        docs.append({"kind": "Cluster", "capacity": doc["cluster"]})
    return yaml.safe_dump_all(docs, sort_keys=False)


def form2(doc):
    queues = _queues(doc)

    def children(parent):
        out = []
        for path in sorted(p for p in queues if p != "root" and p.rsplit("/", 1)[0] == parent):
            entry = queues[path]
            params = [{"name": "weight", "value": entry.get("weight", 1)}]
            params += [{"name": k, "value": v} for k, v in _fields(entry).items()]
            node = {"name": path.rsplit("/", 1)[1], "parameters": params}
            kids = children(path)
            if kids:
                node["children"] = kids
            out.append(node)
        return out

    root_spec = {"hierarchy": children("root")}
    if "root" in queues:
        root_spec.update(_fields(queues["root"]))
        root_spec["weight"] = queues["root"].get("weight", 1)
    docs = [{"kind": "Queue", "metadata": {"name": "root"}, "spec": root_spec}]
    if "cluster" in doc:
        docs.append({"kind": "Cluster", "capacity": doc["cluster"]})
    return yaml.safe_dump_all(docs, sort_keys=False)


def form3(doc):
    queues = _queues(doc)
    entries = []
    for path in sorted(queues, key=lambda p: p.count("/")):
        entry = queues[path]
        if path == "root":
            item = {"name": "root", "weight": entry.get("weight", 1)}    # describes root
        else:
            item = {"name": path.rsplit("/", 1)[1], "parent": path.rsplit("/", 1)[0],
                    "weight": entry.get("weight", 1)}
        item.update(_fields(entry))
        entries.append(item)
    docs = [{"kind": "HierarchicalQueue", "metadata": {"name": "t"},
             "spec": {"queues": entries}}]
    if "cluster" in doc:
        docs.append({"kind": "Cluster", "capacity": doc["cluster"]})
    return yaml.safe_dump_all(docs, sort_keys=False)


FORMS = {1: form1, 2: form2, 3: form3}
