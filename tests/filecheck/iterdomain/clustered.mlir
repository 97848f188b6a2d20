// RUN: fuser-opt %s | filecheck %s
// RUN: fuser-opt %s --print-op-generic | fuser-opt | filecheck %s

// A row split over a thread-block cluster: the outer part of the reduced axis is bound
// to BIDy and clustered (its 8 blocks are one cluster; the id type records it), so the
// row's reduction is combined across the cluster in the kernel.

fuser.fusion @row_max(%x : !fuser.tensor<4x8192xf32>) -> !fuser.tensor<4xf32> {
  %m = fuser.max %x {dims = array<i64: 1>} : (!fuser.tensor<4x8192xf32>) -> !fuser.tensor<4xf32>
  %0, %1 = iterdomain.logical %m : !fuser.tensor<4xf32> -> !iterdomain.id<4>, !iterdomain.id<8192, reduction>
  %2, %3 = iterdomain.split %1 by 1024 : !iterdomain.id<8192, reduction> -> !iterdomain.id<8, reduction>, !iterdomain.id<1024, reduction>
  %b = iterdomain.parallelize %0 to BIDx : !iterdomain.id<4> -> !iterdomain.id<4, BIDx>
  %c = iterdomain.parallelize %2 to BIDy clustered : !iterdomain.id<8, reduction> -> !iterdomain.id<8, reduction, BIDy, clustered>
  %t = iterdomain.parallelize %3 to TIDx : !iterdomain.id<1024, reduction> -> !iterdomain.id<1024, reduction, TIDx>
  iterdomain.loop %m [%b, %c, %t] : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<8, reduction, BIDy, clustered>, !iterdomain.id<1024, reduction, TIDx>]
  fuser.output %m : !fuser.tensor<4xf32>
}

// CHECK-LABEL: fuser.fusion @row_max
// CHECK:         %c = iterdomain.parallelize %{{.*}} to BIDy clustered : !iterdomain.id<8, reduction> -> !iterdomain.id<8, reduction, BIDy, clustered>
// CHECK-NEXT:    %t = iterdomain.parallelize
// CHECK-NEXT:    iterdomain.loop %m [%b, %c, %t] : !fuser.tensor<4xf32> [!iterdomain.id<4, BIDx>, !iterdomain.id<8, reduction, BIDy, clustered>, !iterdomain.id<1024, reduction, TIDx>]
