"""Where on a node each Hardware fact an export cannot give is read: the words every guess's comment uses, in `mpigen
init`'s starting fleet and in what `mpigen import` writes, and the marker of those guesses."""

from __future__ import annotations

GUESS_MARK = "guess:"
"""What starts the comment of each value `mpigen import` could not read: `grep -rn '# guess:'` lists what is left."""

READ_ON_NODE = {
    "hca": "`ibdev2netdev` on a node: mlx5_N port 1 ==> interface",
    "pfName": "`ibdev2netdev`: the interface after ==>",
    "vendorId": "`lspci -nn | grep Mellanox`: [vendor:device]",
    "deviceId": "`lspci -nn | grep Mellanox`: [vendor:device] of the card",
    "vfDeviceId": "`lspci -nn | grep 'Virtual Function'` once VFs exist",
    "linkType": "`ibstat`: Link layer (InfiniBand or Ethernet)",
}
