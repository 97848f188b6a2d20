// RUN: not fuser-opt %s 2>&1 | filecheck %s

// The parallel type comes after the iter type in !iterdomain.id<EXTENT[, ITER_TYPE][, PARALLEL_TYPE]>.

func.func private @bad_type() -> !iterdomain.id<4, TIDx, reduction>
// CHECK: !iterdomain.id: unexpected 'reduction' (syntax: <EXTENT[, ITER_TYPE][, PARALLEL_TYPE[, clustered]]>)
