/*
 * comm.c - collective and pipeline primitives on a two-level network (docs/physics.md
 * §4.1-4.3): NCCL's ring cost (latency + volume over the achieved bus bandwidth), switched or
 * point-to-point meshed scale-up links, and the 1F1B / interleaved bubble ([NAR21]).
 */
#include "eval_internal.h"

#include <math.h>

/* Ranks of a group of n with stride `stride` that share a node. */
uint32_t tp_comm_per_node(uint32_t n, uint64_t stride, uint32_t gpn)
{
    if (n <= 1)
        return 1;
    uint64_t k = stride >= gpn ? 1 : gpn / stride;
    return k > n ? n : (uint32_t)k;
}

bool tp_comm_pcie_only(const struct tp_cluster *c)
{
    return c->gpu.intra_bw <= c->gpu.host_bw;
}

/* Achieved scale-up bandwidth per rank for a group with g ranks in a node: on a switch all of
   it; on a point-to-point mesh (xGMI) the g - 1 links that reach the group's peers. */
double tp_comm_intra_bw(const struct tp_cluster *c, const struct tp_calib *cal, uint32_t g)
{
    double bw = c->gpu.intra_bw * (tp_comm_pcie_only(c) ? cal->eff_pcie : cal->eff_intra);
    uint32_t links = c->gpu.mesh_links;
    if (links > 0 && g >= 1 && g - 1 < links)
        bw *= (g > 1 ? g - 1.0 : 1.0) / links;
    return bw;
}

/* Achieved per-rank bus bandwidth of a group spanning `nodes` nodes with g ranks in each
   (docs/physics.md §4.3). */
double tp_comm_bus_bw(const struct tp_cluster *c, const struct tp_calib *cal, uint32_t g,
                     uint32_t nodes)
{
    double intra = tp_comm_intra_bw(c, cal, g);
    if (nodes <= 1)
        return intra;
    double inter = cal->eff_inter * g * c->gpu.inter_bw;
    return g > 1 && intra < inter ? intra : inter;
}

/* NCCL ring latency: a base plus a per-step cost, inter-node steps costing more. */
double tp_comm_latency(const struct tp_calib *cal, double steps, double inter_steps)
{
    return cal->lat_base_s + (steps - inter_steps) * cal->lat_intra_s +
           inter_steps * cal->lat_inter_s;
}

uint32_t tp_comm_nodes_of(uint32_t n, uint32_t g)
{
    return (n + g - 1) / g;
}

/* A ring collective of `passes` trips around n ranks (all-gather and reduce-scatter one,
   all-reduce two): passes (n - 1) latency steps and passes (n - 1) / n of the bytes per rank. */
static double ring(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                   uint32_t n, uint32_t g, double passes)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    if (!c || !cal || g == 0) /* no ranks per node: no network to price */
        return NAN;
    uint32_t nodes = tp_comm_nodes_of(n, g);
    return tp_comm_latency(cal, passes * (n - 1.0), passes * (nodes - 1.0)) +
           passes * (n - 1) / n * bytes / tp_comm_bus_bw(c, cal, g, nodes);
}

double tp_time_allreduce(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                         uint32_t n, uint32_t g)
{
    return ring(c, cal, bytes, n, g, 2);
}

double tp_time_allgather(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                         uint32_t n, uint32_t g)
{
    return ring(c, cal, bytes, n, g, 1);
}

double tp_time_alltoall(const struct tp_cluster *c, const struct tp_calib *cal, double bytes,
                        uint32_t n, uint32_t g)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    if (!c || !cal || g == 0) /* no ranks per node: no network to price */
        return NAN;
    uint32_t nodes = tp_comm_nodes_of(n, g);
    double intra = tp_comm_intra_bw(c, cal, g);
    double t_intra = bytes * (g - 1) / n / intra;
    double t_inter = nodes > 1 ? bytes * (n - g) / n / (cal->eff_inter * c->gpu.inter_bw) : 0;
    return tp_comm_latency(cal, n - 1.0, nodes - 1.0) + (t_intra > t_inter ? t_intra : t_inter);
}

double tp_bubble_fraction(uint32_t pp, uint32_t vpp, uint32_t micro_batches)
{
    if (pp <= 1 || micro_batches == 0)
        return 0;
    return (double)(pp - 1) / ((double)(vpp ? vpp : 1) * micro_batches);
}

