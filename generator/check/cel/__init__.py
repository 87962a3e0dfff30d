"""CRD validation rules (`x-kubernetes-validations`, CEL) judged as the API server judges them.

- environment.py: the CEL environment (cel-expr-python) and each rule compiled once; unsupported rules and why.
- library.py: the Kubernetes CEL library functions mpigen evaluates.
- values.py: an object as a rule sees it (`self`): escaped names, defaults, the visible metadata.
- tree.py: the rules of a schema, as a tree of the nodes that carry them.
- rules.py: one object judged by a rule tree; failures in the server's words.
- catalog.py: each rule's status (evaluated, live object only, unsupported), for `check --explain-rules`.
- crd_rules.py: the `crd-rules` rule of check's registry.
"""
