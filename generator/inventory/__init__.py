"""What a live cluster says about itself, read from the objects a user exports with `kubectl get -o yaml`."""

from mpigen.inventory.nodes import LiveNode, read_node, selects, tolerates, untolerated

__all__ = ["LiveNode", "read_node", "selects", "tolerates", "untolerated"]
