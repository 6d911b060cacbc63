/* filled by the timer work */
int fake_cuda_placeholder;
