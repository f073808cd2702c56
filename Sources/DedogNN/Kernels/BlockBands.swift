import DedogKernels
import Foundation

/// An MBConv block run band by band: for each band of output rows, the expand convolution fills only the input
/// rows the band's depthwise windows need (rows shared with the previous band are kept, not recomputed), the
/// depthwise convolution writes the band, and the project convolution (with the residual) finishes it while
/// all of it is still in L2. Unbanded, the expanded activation of an early block (4.8 MB at 112×112×96) goes
/// to memory and back. Each thread takes a share of the output rows with scratch of its own, so the block has
/// one synchronisation point instead of three.
struct BandedBlock: Sendable {
    let block: MBConvBlock
    let height, width, outHeight, outWidth: Int
    let padTop: Int
    /// Output rows per band, and the input rows a band's windows span.
    let bandRows, bandInputRows: Int

    /// Bands are sized so that a band's expanded rows and its depthwise output take at most `budget` bytes.
    init(block: MBConvBlock, height: Int, width: Int, budget: Int = 512 << 10) {
        self.block = block
        self.height = height
        self.width = width
        let d = block.depthwise
        (outHeight, padTop) = SamePadding.of(input: height, kernel: d.kernel, stride: d.stride)
        outWidth = SamePadding.of(input: width, kernel: d.kernel, stride: d.stride).output
        let perOutputRow = 4 * d.channels * (d.stride * width + outWidth)
        var rows = max(1, (budget - 4 * d.channels * width * (d.kernel - d.stride)) / perOutputRow)
        rows = min(rows, outHeight)
        bandRows = rows
        bandInputRows = min(height, (rows - 1) * d.stride + d.kernel)
    }

    /// Scratch floats each thread needs.
    var scratchPerPart: Int { block.depthwise.channels * (bandInputRows * width + bandRows * outWidth) }

    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>,
             scratch: UnsafeMutablePointer<Float>, parallel: Parallel) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let work = SharedPointer(scratch)
        parallel { part in
            let rows = slice(outHeight, part: part, of: parallel.parts)
            if rows.isEmpty { return }
            runRows(rows, src.base, dst.base, work.base + part * scratchPerPart, parallel.kernels)
        }
    }

    private func runRows(_ rows: Range<Int>, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>,
                         _ scratch: UnsafeMutablePointer<Float>, _ kernels: KernelSet) {
        let d = block.depthwise, mid = d.channels
        let cin = block.expand?.inChannels ?? mid, cout = block.project.outChannels
        let expanded = scratch, band = scratch + bandInputRows * width * mid
        let rowFloats = width * mid
        var have = 0..<0  // input rows now in `expanded`, from its start
        var oy0 = rows.lowerBound
        while oy0 < rows.upperBound {
            let oy1 = min(rows.upperBound, oy0 + bandRows)
            let need = max(0, oy0 * d.stride - padTop)..<min(height, (oy1 - 1) * d.stride - padTop + d.kernel)
            var dwInput = x + need.lowerBound * width * cin
            if let expand = block.expand {
                var start = need.lowerBound
                if have.contains(need.lowerBound) {
                    // Rows this band shares with the last one move to the front.
                    let kept = have.upperBound - need.lowerBound
                    memmove(expanded, expanded + (need.lowerBound - have.lowerBound) * rowFloats,
                            kept * rowFloats * MemoryLayout<Float>.size)
                    start = have.upperBound
                }
                expand.runRows(x + start * width * cin, expanded + (start - need.lowerBound) * rowFloats,
                               rows: (need.upperBound - start) * width, residual: nil, kernels: kernels)
                have = need
                dwInput = UnsafePointer(expanded)
            }
            d.runBand(dwInput, firstInputRow: need.lowerBound, band, rows: oy0..<oy1, height: height, width: width,
                      kernels: kernels)
            block.project.runRows(band, y + oy0 * outWidth * cout, rows: (oy1 - oy0) * outWidth,
                                  residual: block.spec.hasResidual ? x + oy0 * outWidth * cin : nil, kernels: kernels)
            oy0 = oy1
        }
    }
}
