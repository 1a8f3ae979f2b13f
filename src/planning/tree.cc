#include "planning/tree.h"

namespace braid {

namespace {

int lowestSetBit(int i) { return i & -i; }

}  // namespace

BinaryTreeNode binaryTreeNode(int n, int i) {
  BinaryTreeNode node;
  if (n <= 0 || i < 0 || i >= n) return node;
  if (i == 0) {
    // The root sits above every other node: its subtree is the whole range, so its one
    // child is the first valid node on the left spine 2^k, 2^(k-1), ..., 1.
    if (n > 1) {
      int child = 1;
      while (child * 2 < n) child *= 2;
      node.children[0] = child;
    }
    return node;
  }
  int bit = lowestSetBit(i);
  int naturalParent = (i ^ bit) | (bit << 1);
  // Beyond n-1 the natural parent is missing, and so is every natural ancestor up to i - b
  // (they are all above i); i - b is then the nearest valid ancestor.
  node.parent = naturalParent < n ? naturalParent : (i ^ bit);
  if (bit > 1) {
    node.children[0] = i - bit / 2;  // always valid: below i
    // The first valid node down the left spine of the right subtree; the same rule as the
    // parent's fallback above, seen from the other end of the edge.
    for (int step = bit / 2; step >= 1; step /= 2) {
      if (i + step < n) {
        node.children[1] = i + step;
        break;
      }
    }
  }
  return node;
}

BinaryTreeNode doubleBinaryTreeNode(int n, int i, int tree) {
  if (tree == 0 || n <= 0 || i < 0 || i >= n) return binaryTreeNode(n, i);
  // Node i plays the part of node place(i) of tree 0; its neighbours are the nodes that
  // play the parts of place(i)'s neighbours.
  bool mirror = n % 2 == 0;
  auto place = [&](int node) { return mirror ? n - 1 - node : (node - 1 + n) % n; };
  auto nodeAt = [&](int p) { return p < 0 ? -1 : (mirror ? n - 1 - p : (p + 1) % n); };
  BinaryTreeNode shape = binaryTreeNode(n, place(i));
  BinaryTreeNode node;
  node.parent = nodeAt(shape.parent);
  node.children[0] = nodeAt(shape.children[0]);
  node.children[1] = nodeAt(shape.children[1]);
  return node;
}

TreeLinks buildTreeLinks(const RankLayout& layout, int rank, int tree) {
  TreeLinks links;
  int nranks = static_cast<int>(layout.nodeOfRank.size());
  if (rank < 0 || rank >= nranks) return links;
  int node = layout.nodeOfRank[rank];
  int local = layout.localRankOf[rank];
  const std::vector<int>& chain = layout.ranksOfNode[node];
  int chainLength = static_cast<int>(chain.size());
  auto addDown = [&](int peer) { links.down[links.nDown++] = peer; };

  if (local + 1 < chainLength) addDown(chain[local + 1]);
  if (local > 0) {
    links.up = chain[local - 1];
    return links;
  }
  // The chain head: the host's place in the tree over hosts.
  BinaryTreeNode host = doubleBinaryTreeNode(layout.nNodes, node, tree & 1);
  if (host.parent >= 0) links.up = layout.ranksOfNode[host.parent].front();
  for (int child : host.children) {
    if (child >= 0) addDown(layout.ranksOfNode[child].front());
  }
  return links;
}

}  // namespace braid
