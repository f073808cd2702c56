import CCBLAS

/// OpenBLAS keeps its thread count in process-wide state. The engine does its own threading (each of its
/// threads calls single-threaded GEMMs on its own slice), so it pins OpenBLAS to one thread; two thread
/// pools fighting over two cores would only slow both.
public enum BLASThreads {
    public static func useSingleThreadedBLAS() {
        if openblas_get_num_threads() != 1 { openblas_set_num_threads(1) }
    }
}
