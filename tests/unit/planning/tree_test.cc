// The binary tree, the double binary tree and the per-rank tree links.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "layouts.h"
#include "planning/tree.h"

namespace braid {
namespace {

using algo_test::blockLayout;
using algo_test::layoutFromHosts;
using algo_test::roundRobinLayout;
using algo_test::unevenLayout;

constexpr int kMaxN = 1024;

int ceilLog2(int n) {
  int log = 0;
  while ((1 << log) < n) ++log;
  return log;
}

int childCount(const BinaryTreeNode& node) { return (node.children[0] >= 0) + (node.children[1] >= 0); }

using NodeFn = std::function<BinaryTreeNode(int)>;

// Checks that the nodes 0..n-1 given by `nodeOf` form one tree with consistent links and
// returns its depth (edges from the root to the deepest node).
int expectConsistentTree(int n, const NodeFn& nodeOf) {
  std::vector<BinaryTreeNode> nodes;
  for (int i = 0; i < n; ++i) nodes.push_back(nodeOf(i));
  int root = -1;
  for (int i = 0; i < n; ++i) {
    const BinaryTreeNode& node = nodes[i];
    if (node.parent < 0) {
      EXPECT_EQ(root, -1) << "second root " << i;
      root = i;
    } else {
      EXPECT_LT(node.parent, n);
      EXPECT_NE(node.parent, i);
      const BinaryTreeNode& parent = nodes[node.parent];
      EXPECT_TRUE(parent.children[0] == i || parent.children[1] == i) << i << " not a child of its parent";
    }
    EXPECT_FALSE(node.children[0] < 0 && node.children[1] >= 0) << "lone child not in children[0] at " << i;
    for (int child : node.children) {
      if (child < 0) continue;
      EXPECT_LT(child, n);
      EXPECT_EQ(nodes[child].parent, i) << "child " << child << " of " << i << " has another parent";
    }
    if (node.children[1] >= 0) {
      EXPECT_NE(node.children[0], node.children[1]);
    }
  }
  EXPECT_GE(root, 0) << "no root";
  if (root < 0) return 0;
  // Every node reachable from the root exactly once: a tree, no cycles.
  std::vector<int> depth(n, -1);
  std::vector<int> stack = {root};
  depth[root] = 0;
  int reached = 0;
  int maxDepth = 0;
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    ++reached;
    maxDepth = std::max(maxDepth, depth[i]);
    for (int child : nodes[i].children) {
      if (child < 0) continue;
      EXPECT_EQ(depth[child], -1) << "node " << child << " reached twice";
      if (depth[child] != -1) return maxDepth;
      depth[child] = depth[i] + 1;
      stack.push_back(child);
    }
  }
  EXPECT_EQ(reached, n);
  return maxDepth;
}

TEST(BinaryTree, SmallTrees) {
  BinaryTreeNode node = binaryTreeNode(1, 0);
  EXPECT_EQ(node.parent, -1);
  EXPECT_EQ(childCount(node), 0);

  EXPECT_EQ(binaryTreeNode(2, 0).children[0], 1);
  EXPECT_EQ(binaryTreeNode(2, 1).parent, 0);

  // n = 7: 0 -> 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5 (7 is clipped).
  EXPECT_EQ(binaryTreeNode(7, 0).children[0], 4);
  EXPECT_EQ(binaryTreeNode(7, 0).children[1], -1);
  EXPECT_EQ(binaryTreeNode(7, 4).parent, 0);
  EXPECT_EQ(binaryTreeNode(7, 4).children[0], 2);
  EXPECT_EQ(binaryTreeNode(7, 4).children[1], 6);
  EXPECT_EQ(binaryTreeNode(7, 6).children[0], 5);
  EXPECT_EQ(binaryTreeNode(7, 6).children[1], -1);
  EXPECT_EQ(binaryTreeNode(7, 5).parent, 6);
  EXPECT_EQ(binaryTreeNode(7, 3).parent, 2);

  // n = 5: 4's right child 6 and its spine (5) are missing; 4 has one child.
  EXPECT_EQ(binaryTreeNode(5, 4).children[0], 2);
  EXPECT_EQ(binaryTreeNode(5, 4).children[1], -1);

  // n = 11: 8's natural right child 12 is missing; the first valid node down its left
  // spine is 10, whose natural parent 12 is missing too, so its parent is 8.
  EXPECT_EQ(binaryTreeNode(11, 8).children[1], 10);
  EXPECT_EQ(binaryTreeNode(11, 10).parent, 8);
  // n = 10: 12 and 10 are missing, 9 is the first valid node on the spine.
  EXPECT_EQ(binaryTreeNode(10, 8).children[1], 9);
  EXPECT_EQ(binaryTreeNode(10, 9).parent, 8);
}

TEST(BinaryTree, OutOfRange) {
  for (BinaryTreeNode node : {binaryTreeNode(0, 0), binaryTreeNode(4, 4), binaryTreeNode(4, -1),
                              doubleBinaryTreeNode(4, 7, 1), doubleBinaryTreeNode(0, 0, 1)}) {
    EXPECT_EQ(node.parent, -1);
    EXPECT_EQ(childCount(node), 0);
  }
}

TEST(BinaryTree, StructureForEverySizeUpTo1024) {
  for (int n = 1; n <= kMaxN; ++n) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    int depth = expectConsistentTree(n, [n](int i) { return binaryTreeNode(n, i); });
    EXPECT_EQ(depth, ceilLog2(n));
    EXPECT_EQ(binaryTreeNode(n, 0).parent, -1);
    if (n > 1) {
      int largestPowerBelow = 1;
      while (largestPowerBelow * 2 < n) largestPowerBelow *= 2;
      EXPECT_EQ(binaryTreeNode(n, 0).children[0], largestPowerBelow);
      EXPECT_EQ(childCount(binaryTreeNode(n, 0)), 1);
    }
    for (int i = 1; i < n; ++i) {
      BinaryTreeNode node = binaryTreeNode(n, i);
      int bit = i & -i;
      // The parent sits one level up: i with its lowest bit moved up, or cleared.
      EXPECT_TRUE(node.parent == i + bit || node.parent == i - bit) << i;
      EXPECT_TRUE(node.parent == 0 || (node.parent & -node.parent) > bit) << i;
      // In order: the left child below, the right child above, odd nodes are leaves.
      if (node.children[0] >= 0) {
        EXPECT_LT(node.children[0], i);
      }
      if (node.children[1] >= 0) {
        EXPECT_GT(node.children[1], i);
      }
      EXPECT_EQ(childCount(node) == 0, i % 2 == 1) << i;
    }
  }
}

TEST(DoubleBinaryTree, TreeZeroIsTheBinaryTree) {
  for (int n = 1; n <= 64; ++n) {
    for (int i = 0; i < n; ++i) {
      BinaryTreeNode a = binaryTreeNode(n, i);
      BinaryTreeNode b = doubleBinaryTreeNode(n, i, 0);
      EXPECT_EQ(a.parent, b.parent);
      EXPECT_EQ(a.children[0], b.children[0]);
      EXPECT_EQ(a.children[1], b.children[1]);
    }
  }
}

TEST(DoubleBinaryTree, MirrorAndShift) {
  // Even n: the mirror. n = 4: tree 0 is 0 -> 2 -> {1, 3}; tree 1 is 3 -> 1 -> {2, 0}.
  EXPECT_EQ(doubleBinaryTreeNode(4, 3, 1).parent, -1);
  EXPECT_EQ(doubleBinaryTreeNode(4, 3, 1).children[0], 1);
  EXPECT_EQ(doubleBinaryTreeNode(4, 1, 1).parent, 3);
  EXPECT_EQ(childCount(doubleBinaryTreeNode(4, 1, 1)), 2);
  EXPECT_EQ(doubleBinaryTreeNode(4, 0, 1).parent, 1);
  // Odd n: the shift. n = 3: tree 0 is 0 -> 2 -> 1; tree 1 is 1 -> 0 -> 2.
  EXPECT_EQ(doubleBinaryTreeNode(3, 1, 1).parent, -1);
  EXPECT_EQ(doubleBinaryTreeNode(3, 1, 1).children[0], 0);
  EXPECT_EQ(doubleBinaryTreeNode(3, 0, 1).children[0], 2);
  EXPECT_EQ(doubleBinaryTreeNode(3, 2, 1).parent, 0);
}

TEST(DoubleBinaryTree, LeafInterleavingForEverySizeUpTo1024) {
  for (int n = 1; n <= kMaxN; ++n) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    int depth = expectConsistentTree(n, [n](int i) { return doubleBinaryTreeNode(n, i, 1); });
    EXPECT_EQ(depth, ceilLog2(n));
    int root1 = n % 2 == 0 ? n - 1 : (n > 1 ? 1 : 0);
    EXPECT_EQ(doubleBinaryTreeNode(n, root1, 1).parent, -1);
    if (n < 2) continue;
    for (int i = 0; i < n; ++i) {
      int children0 = childCount(doubleBinaryTreeNode(n, i, 0));
      int children1 = childCount(doubleBinaryTreeNode(n, i, 1));
      // Interior nodes of tree 0 are the even ones.
      EXPECT_EQ(children0 > 0, i % 2 == 0) << i;
      if (n % 2 == 1 && i == 0) {
        // The one exception, odd n only: node 0 has one child in each tree.
        EXPECT_EQ(children0, 1);
        EXPECT_EQ(children1, 1);
      } else {
        EXPECT_TRUE((children0 == 0) != (children1 == 0)) << "node " << i << " is a leaf in exactly one tree";
      }
      EXPECT_LE(children0 + children1, 2) << i;
    }
  }
}

// ---- Per-rank tree links ----

// Checks every property the data path relies on for tree `tree` of `layout`; returns the
// depth (edges from the root to the deepest rank).
int expectValidTreeLinks(const RankLayout& layout, int tree) {
  int n = static_cast<int>(layout.nodeOfRank.size());
  std::vector<TreeLinks> links;
  for (int r = 0; r < n; ++r) links.push_back(buildTreeLinks(layout, r, tree));
  int root = -1;
  for (int r = 0; r < n; ++r) {
    const TreeLinks& link = links[r];
    EXPECT_GE(link.nDown, 0);
    EXPECT_LE(link.nDown, kMaxTreeArity);
    for (int k = link.nDown; k < kMaxTreeArity; ++k) EXPECT_EQ(link.down[k], -1);
    int local = layout.localRankOf[r];
    const std::vector<int>& chain = layout.ranksOfNode[layout.nodeOfRank[r]];
    if (local > 0) {
      EXPECT_EQ(link.up, chain[local - 1]) << "chain up of rank " << r;
      EXPECT_LE(link.nDown, 1);
    }
    if (local + 1 < static_cast<int>(chain.size())) {
      EXPECT_GE(link.nDown, 1);
      EXPECT_EQ(link.down[0], chain[local + 1]) << "chain successor comes first at rank " << r;
    }
    if (link.up < 0) {
      EXPECT_EQ(root, -1) << "second root " << r;
      root = r;
    } else {
      EXPECT_NE(link.up, r);
      // Host-to-host links join chain heads only.
      if (layout.nodeOfRank[link.up] != layout.nodeOfRank[r]) {
        EXPECT_EQ(local, 0);
        EXPECT_EQ(layout.localRankOf[link.up], 0);
      }
    }
    // x's up is y exactly when x is among y's down.
    for (int k = 0; k < link.nDown; ++k) {
      int child = link.down[k];
      EXPECT_GE(child, 0);
      EXPECT_LT(child, n);
      if (child >= 0 && child < n) {
        EXPECT_EQ(links[child].up, r) << "down " << child << " of " << r;
      }
    }
    if (link.up >= 0) {
      const TreeLinks& parent = links[link.up];
      EXPECT_NE(std::find(parent.down, parent.down + parent.nDown, r), parent.down + parent.nDown)
          << r << " missing from its up's down";
    }
  }
  EXPECT_GE(root, 0) << "no root";
  if (root < 0) return 0;
  EXPECT_EQ(layout.localRankOf[root], 0) << "the root is a chain head";
  std::vector<int> depth(n, -1);
  std::vector<int> stack = {root};
  depth[root] = 0;
  int reached = 0;
  int maxDepth = 0;
  while (!stack.empty()) {
    int r = stack.back();
    stack.pop_back();
    ++reached;
    maxDepth = std::max(maxDepth, depth[r]);
    for (int k = 0; k < links[r].nDown; ++k) {
      int child = links[r].down[k];
      EXPECT_EQ(depth[child], -1) << "rank " << child << " reached twice: a cycle";
      if (depth[child] != -1) return maxDepth;
      depth[child] = depth[r] + 1;
      stack.push_back(child);
    }
  }
  EXPECT_EQ(reached, n) << "ranks unreachable from the root";
  return maxDepth;
}

void expectValidLayout(const RankLayout& layout) {
  int maxLocal = 0;
  for (const std::vector<int>& ranks : layout.ranksOfNode)
    maxLocal = std::max(maxLocal, static_cast<int>(ranks.size()));
  for (int tree = 0; tree < 2; ++tree) {
    SCOPED_TRACE(::testing::Message() << "tree " << tree);
    int depth = expectValidTreeLinks(layout, tree);
    EXPECT_LE(depth, ceilLog2(layout.nNodes) + maxLocal - 1);
  }
}

TEST(TreeLinks, SingleHostIsAChain) {
  RankLayout layout = blockLayout(1, 4);
  for (int tree = 0; tree < 2; ++tree) {
    for (int r = 0; r < 4; ++r) {
      TreeLinks links = buildTreeLinks(layout, r, tree);
      EXPECT_EQ(links.up, r - 1);
      EXPECT_EQ(links.nDown, r < 3 ? 1 : 0);
      EXPECT_EQ(links.down[0], r < 3 ? r + 1 : -1);
    }
  }
  TreeLinks alone = buildTreeLinks(blockLayout(1, 1), 0, 0);
  EXPECT_EQ(alone.up, -1);
  EXPECT_EQ(alone.nDown, 0);
}

TEST(TreeLinks, HeadsJoinTheHostTree) {
  // Four hosts of two ranks, block placement: heads are 0, 2, 4, 6 (hosts 0..3).
  // Tree 0 over hosts: 0 -> 2 -> {1, 3}; tree 1 (mirror): 3 -> 1 -> {2, 0}.
  RankLayout layout = blockLayout(4, 2);
  TreeLinks head0 = buildTreeLinks(layout, 0, 0);
  EXPECT_EQ(head0.up, -1);
  ASSERT_EQ(head0.nDown, 2);
  EXPECT_EQ(head0.down[0], 1);
  EXPECT_EQ(head0.down[1], 4);
  TreeLinks head2 = buildTreeLinks(layout, 4, 0);
  EXPECT_EQ(head2.up, 0);
  ASSERT_EQ(head2.nDown, 3);
  EXPECT_EQ(head2.down[0], 5);
  EXPECT_EQ(head2.down[1], 2);
  EXPECT_EQ(head2.down[2], 6);
  EXPECT_EQ(buildTreeLinks(layout, 6, 1).up, -1);
  EXPECT_EQ(buildTreeLinks(layout, 2, 1).up, 6);
  // Only the lowest bit of the tree index counts: channel 3 uses tree 1.
  EXPECT_EQ(buildTreeLinks(layout, 2, 3).up, 6);
  EXPECT_EQ(buildTreeLinks(layout, 2, 2).up, 4);
}

TEST(TreeLinks, RoundRobinPlacement) {
  // Ranks 0..5 on hosts r % 3: host 0 = {0, 3}, host 1 = {1, 4}, host 2 = {2, 5}.
  RankLayout layout = roundRobinLayout(3, 2);
  EXPECT_EQ(buildTreeLinks(layout, 3, 0).up, 0);
  EXPECT_EQ(buildTreeLinks(layout, 4, 0).up, 1);
  // Tree 0 over 3 hosts: 0 -> 2 -> 1.
  TreeLinks head0 = buildTreeLinks(layout, 0, 0);
  ASSERT_EQ(head0.nDown, 2);
  EXPECT_EQ(head0.down[0], 3);
  EXPECT_EQ(head0.down[1], 2);
  EXPECT_EQ(buildTreeLinks(layout, 1, 0).up, 2);
  expectValidLayout(layout);
}

TEST(TreeLinks, OutOfRangeRank) {
  TreeLinks links = buildTreeLinks(blockLayout(2, 2), 4, 0);
  EXPECT_EQ(links.up, -1);
  EXPECT_EQ(links.nDown, 0);
  EXPECT_EQ(buildTreeLinks(blockLayout(2, 2), -1, 0).nDown, 0);
}

TEST(TreeLinks, ManyLayouts) {
  for (int hosts = 1; hosts <= 64; ++hosts) {
    for (int perHost = 1; perHost <= 8; ++perHost) {
      SCOPED_TRACE(::testing::Message() << hosts << " hosts x " << perHost);
      {
        SCOPED_TRACE("block");
        expectValidLayout(blockLayout(hosts, perHost));
      }
      {
        SCOPED_TRACE("round robin");
        expectValidLayout(roundRobinLayout(hosts, perHost));
      }
      {
        SCOPED_TRACE("uneven");
        expectValidLayout(unevenLayout(hosts, perHost, hosts * 977 + perHost));
      }
    }
  }
}

TEST(TreeLinks, IrregularHostNumbering) {
  // Host labels unrelated to rank order; hosts are numbered by their first rank.
  expectValidLayout(layoutFromHosts({5, 5, 2, 9, 2, 5, 9, 9, 1}));
}

}  // namespace
}  // namespace braid
