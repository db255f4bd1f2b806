"""Union-find over dense node numbers, where every set knows its best member.

Nodes are numbered so that a smaller number is a better survivor (the caller numbers them in
survivor-key order), so a set's best member is its smallest node: the survivor of a cluster
is known at every step, which is what the merge guard compares. Plain lists, not numpy: the
work is scalar look-ups, where lists are several times faster.
"""

from __future__ import annotations


class UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))
        self.size = [1] * n
        self.best = list(range(n))  # valid at roots: the set's smallest node

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:  # path halving: every visited node skips to its grandparent
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, ra: int, rb: int) -> int:
        """Join the sets of roots `ra` and `rb` (union by size); returns the new root."""
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        self.best[ra] = min(self.best[ra], self.best[rb])
        return ra

    def roots(self) -> list[int]:
        return [self.find(x) for x in range(len(self.parent))]
