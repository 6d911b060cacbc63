#ifndef ZLB_CUDA_DRIVER_H
#define ZLB_CUDA_DRIVER_H
#endif
