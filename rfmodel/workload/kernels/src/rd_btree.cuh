// Rodinia b+tree: the flattened tree both search kernels walk, one CTA per query and one thread per key slot.

// The tree's order (key slots per node): it fixes the node layout and the CTA size.
#define RD_BT_ORDER 256

// A node of the flattened tree (the original's layout): slot i of an inner node covers keys in
// [key[i], key[i+1]) and child[i] is the node index of that subtree; in a leaf child[i] is the record
// index of key[i]. Unused slots hold INT_MAX, slot 0 INT_MIN.
struct RdBtNode {
    int self;
    int child[RD_BT_ORDER + 1];
    int key[RD_BT_ORDER + 1];
    bool leaf;
    int n_keys;
};

// One level of query q's descent, by the thread of `slot`: when the slot's key interval of node at[q] holds
// key[q], next[q] becomes the child that the slot of node from[q] names, unless that lies outside the n_nodes
// nodes. findK reads the child from node next[q] (the original's offset array), findRangeK from node at[q].
__device__ __forceinline__ void rd_bt_descend(RdBtNode* tree, long n_nodes, long* at, long* from, long* next,
                                              int* key, int q, int slot)
{
    if (tree[at[q]].key[slot] <= key[q] && tree[at[q]].key[slot + 1] > key[q]) {
        if (tree[from[q]].child[slot] < n_nodes) {
            next[q] = tree[from[q]].child[slot];
        }
    }
}
