from gristmill.stages.dedup.unionfind import UnionFind


def test_union_find_knows_each_sets_best_member():
    uf = UnionFind(6)
    r = uf.union(uf.find(4), uf.find(5))
    r = uf.union(uf.find(2), r)
    assert uf.best[uf.find(5)] == 2 and uf.size[r] == 3
    assert uf.roots()[1] == 1 and len({uf.find(x) for x in (2, 4, 5)}) == 1
