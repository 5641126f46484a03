// rfmodel: description = One BFS level (top-down): each thread takes frontier vertices, walks their adjacency lists, claims unvisited neighbours with atomicCAS on the level array, and appends them to the next frontier.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 8
// rfmodel: category = irregular, memory-bound, cache-sensitive, integer-heavy, register-insensitive

extern "C" __global__ void __launch_bounds__(256)
bfs_expand(int frontier_size, const int* __restrict__ frontier, const int* __restrict__ rowptr,
           const int* __restrict__ adj, int* levels, int level, int* next_frontier, int* next_size)
{
    const int stride = gridDim.x * blockDim.x;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < frontier_size; t += stride) {
        const int v = frontier[t];
        const int beg = rowptr[v];
        const int end = rowptr[v + 1];
        for (int e = beg; e < end; ++e) {
            const int u = adj[e];
            // Plain read first; only unvisited vertices pay for the atomic.
            if (levels[u] >= 0)
                continue;
            if (atomicCAS(&levels[u], -1, level + 1) == -1) {
                const int slot = atomicAdd(next_size, 1);
                next_frontier[slot] = u;
            }
        }
    }
}
