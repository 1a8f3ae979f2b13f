// Trees for the tree algorithm (AllReduce): the ranks of each host form a chain, and the
// chain heads form a double binary tree across hosts. Two complementary binary trees
// carry half of the data each, so that a host that forwards to two children in one tree is
// a leaf (or nearly) in the other, and every host's links carry about the same load.
//
// The binary tree over 0..n-1 (binaryTreeNode) is the in-order tree in which a node's
// height is the position of its lowest set bit:
//   - node i > 0 with lowest set bit b has the natural parent i - b or i + b, whichever
//     has lowest set bit 2b (that is (i ^ b) | 2b), and the natural children i - b/2 and
//     i + b/2 (none when b == 1: every odd node is a leaf);
//   - node 0 is the root; its one child is the largest power of two below n.
// With n not a power of two some natural nodes lie beyond n-1. The left child i - b/2 is
// always valid. A missing right child i + b/2 is replaced by the first valid node down
// its left spine (i + b/4, i + b/8, ..., i + 1), and a node whose natural parent i + b is
// missing takes instead its nearest valid ancestor, which is i - b (i with its lowest bit
// cleared): the two rules describe the same edges. Every node then has at most two
// children, and the depth is ceil(log2(n)).
//
// The second tree of the pair (doubleBinaryTreeNode, tree 1) gives each node the place of
// another node of the first: the mirror (node i takes place n-1-i) when n is even, the
// shift (node i takes place (i-1+n) % n, so node 1 is its root) when n is odd. What holds
// (tested for every n up to 1024):
//   - interior nodes of tree 0 are exactly the even nodes (0 included);
//   - n even: every node is a leaf in exactly one of the two trees and interior in the
//     other;
//   - n odd (n >= 3): the same holds for every node but 0, which has exactly one child in
//     each tree (it is the root of tree 0 and takes the even place n-1 in tree 1);
//   - so for every n >= 2, no node has more than two children over both trees together.
#pragma once

#include "planning/rank_layout.h"

namespace braid {

struct BinaryTreeNode {
  int parent = -1;             // -1: the root
  int children[2] = {-1, -1};  // a node with one child has it in children[0]
};

// Node i of the binary tree over 0..n-1 described above; all -1 when i is not in 0..n-1.
BinaryTreeNode binaryTreeNode(int n, int i);
// Node i of tree `tree` (0 or 1) of the double binary tree over 0..n-1.
BinaryTreeNode doubleBinaryTreeNode(int n, int i, int tree);

constexpr int kMaxTreeArity = 3;  // the chain successor plus two child hosts

struct TreeLinks {
  int up = -1;  // -1: the root of the tree
  int down[kMaxTreeArity] = {-1, -1, -1};
  int nDown = 0;
};

// The links of `rank` in tree `tree` of a channel. Inside each host the ranks form a chain
// in local-rank order (local rank k's up is local rank k-1, its down local rank k+1); the
// host's first rank (the chain head) joins the double binary tree over hosts (RankLayout's
// node numbers): its up is the head of the parent host, its down the chain successor first,
// then the heads of the child hosts. Only the lowest bit of `tree` counts, so a channel
// index may be passed directly. All -1 when `rank` is not in the layout.
TreeLinks buildTreeLinks(const RankLayout& layout, int rank, int tree);

}  // namespace braid
