import DedogKernels
import Foundation

/// An MBConv block run band by band: for each band of output rows, the expand convolution fills only the input
/// rows the band's depthwise windows need (rows shared with the previous band are kept, not recomputed), the
/// depthwise convolution writes the band, and the project convolution (with the residual) finishes it while
/// all of it is still in L2. Unbanded, the expanded activation of an early block (4.8 MB at 112×112×96 in floats)
/// goes to memory and back. Each thread takes a share of the output rows with scratch of its own, so the block has
/// one synchronisation point instead of three. The same walk serves the float layers and the 8-bit ones
/// (`QuantizedNetwork.Block.runBanded`): only the element size and the three layers' calls differ.
struct BandedBlock: Sendable {
    /// The block's row of the table and its float layers (nil in a plan for the 8-bit layers).
    let spec: BlockSpec
    let block: MBConvBlock?
    let height, width, outHeight, outWidth: Int
    let padTop: Int
    /// Bytes per activation: 4 for floats, 1 for bytes.
    let elementSize: Int
    /// Output rows per band, and the input rows a band's windows span.
    let bandRows, bandInputRows: Int

    /// Bands are sized so that a band's expanded rows and its depthwise output take at most `budget` bytes.
    init(spec: BlockSpec, block: MBConvBlock?, height: Int, width: Int, elementSize: Int, budget: Int = 512 << 10) {
        (self.spec, self.block, self.elementSize) = (spec, block, elementSize)
        let (kernel, stride, channels) = (spec.kernel, spec.stride, spec.expandedChannels)
        self.height = height
        self.width = width
        (outHeight, padTop) = SamePadding.of(input: height, kernel: kernel, stride: stride)
        outWidth = SamePadding.of(input: width, kernel: kernel, stride: stride).output
        let perOutputRow = elementSize * channels * (stride * width + outWidth)
        var rows = max(1, (budget - elementSize * channels * width * (kernel - stride)) / perOutputRow)
        rows = min(rows, outHeight)
        bandRows = rows
        bandInputRows = min(height, (rows - 1) * stride + kernel)
    }

    var kernel: Int { spec.kernel }
    var stride: Int { spec.stride }
    /// The expanded channels: the depthwise layer's.
    var channels: Int { spec.expandedChannels }
    var expands: Bool { spec.expands }

    /// Scratch elements each thread needs.
    var scratchPerPart: Int { channels * (bandInputRows * width + bandRows * outWidth) }

    /// The float block: `input` to `output`, each thread with its own part of `scratch`.
    func run(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>,
             scratch: UnsafeMutablePointer<Float>, parallel: Parallel) {
        guard let block else { return }  // plans for floats always carry the block
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let work = SharedPointer(scratch)
        let kernels = parallel.kernels, width = width, outWidth = outWidth, height = height
        let cin = block.expand?.inChannels ?? channels, cout = block.project.outChannels
        parallel { part in
            let x = UnsafePointer(src.base), y = dst.base
            walk(part: part, of: parallel.parts, scratch: UnsafeMutableRawPointer(work.base + part * scratchPerPart),
                 expand: { rows, into in
                     block.expand?.runRows(x + rows.lowerBound * width * cin, into.assumingMemoryBound(to: Float.self),
                                           rows: rows.count * width, residual: nil, kernels: kernels)
                 },
                 depthwise: { inputRows, firstInputRow, band, rows in
                     block.depthwise.runBand(inputRows.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
                                                 ?? x + firstInputRow * width * cin,
                                             firstInputRow: firstInputRow, band.assumingMemoryBound(to: Float.self),
                                             rows: rows, height: height, width: width, kernels: kernels)
                 },
                 project: { band, rows in
                     block.project.runRows(UnsafePointer(band.assumingMemoryBound(to: Float.self)), y + rows.lowerBound * outWidth * cout,
                                           rows: rows.count * outWidth,
                                           residual: block.spec.hasResidual ? x + rows.lowerBound * outWidth * cin : nil, kernels: kernels)
                 })
        }
    }

    /// One thread's share of the block, `part` of `parts`: its output rows band by band. `expand(rows, into)` computes
    /// the expanded input rows `rows` into `into`; `depthwise(expanded, firstInputRow, band, rows)` the depthwise
    /// output rows `rows` into `band`, from the expanded rows (nil where the block does not expand: then from the
    /// block's input, whose row `firstInputRow` the band's windows start at); `project(band, rows)` the block's
    /// output rows.
    func walk(part: Int, of parts: Int, scratch: UnsafeMutableRawPointer,
              expand: (Range<Int>, UnsafeMutableRawPointer) -> Void,
              depthwise: (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer, Range<Int>) -> Void,
              project: (UnsafeMutableRawPointer, Range<Int>) -> Void) {
        let rows = slice(outHeight, part: part, of: parts)
        if rows.isEmpty { return }
        let expanded = scratch, band = scratch + bandInputRows * width * channels * elementSize
        let rowBytes = width * channels * elementSize
        var have = 0..<0  // input rows now in `expanded`, from its start
        var oy0 = rows.lowerBound
        while oy0 < rows.upperBound {
            let oy1 = min(rows.upperBound, oy0 + bandRows)
            let need = max(0, oy0 * stride - padTop)..<min(height, (oy1 - 1) * stride - padTop + kernel)
            if expands {
                var start = need.lowerBound
                if have.contains(need.lowerBound) {
                    // Rows this band shares with the last one move to the front.
                    let kept = have.upperBound - need.lowerBound
                    memmove(expanded, expanded + (need.lowerBound - have.lowerBound) * rowBytes, kept * rowBytes)
                    start = have.upperBound
                }
                expand(start..<need.upperBound, expanded + (start - need.lowerBound) * rowBytes)
                have = need
            }
            depthwise(expands ? expanded : nil, need.lowerBound, band, oy0..<oy1)
            project(band, oy0..<oy1)
            oy0 = oy1
        }
    }
}

extension QuantizedNetwork.Block {
    /// The 8-bit block band by band (`BandedBlock.walk`), its bytes exactly those of the layers run one by one.
    func runBanded(_ banded: BandedBlock, _ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>,
                   scratch: UnsafeMutableRawPointer, parallel: Parallel) {
        let src = SharedPointer(UnsafeMutablePointer(mutating: input)), dst = SharedPointer(output)
        let work = SharedPointer(scratch.assumingMemoryBound(to: UInt8.self))
        let kernels = parallel.kernels, width = banded.width, outWidth = banded.outWidth, height = banded.height
        let cin = expand?.inChannels ?? banded.channels, cout = project.outChannels
        let expandPanels = expand.map { 0..<$0.panelCount } ?? 0..<0, projectPanels = 0..<project.panelCount
        let residual = banded.spec.hasResidual
        parallel { part in
            let x = UnsafePointer(src.base), y = dst.base
            banded.walk(part: part, of: parallel.parts, scratch: UnsafeMutableRawPointer(work.base + part * banded.scratchPerPart),
                        expand: { rows, into in
                            expand?.runRows(x + rows.lowerBound * width * cin, into, rows: rows.count * width,
                                            panels: expandPanels, residual: nil, kernels: kernels)
                        },
                        depthwise: { expanded, firstInputRow, band, rows in
                            depthwise.runRows(expanded.map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) }
                                                  ?? x + firstInputRow * width * cin,
                                              band.assumingMemoryBound(to: UInt8.self), rows: rows, height: height, width: width,
                                              channels: 0..<depthwise.channels, kernels: kernels, firstInputRow: firstInputRow,
                                              firstOutputRow: rows.lowerBound)
                        },
                        project: { band, rows in
                            project.runRows(UnsafePointer(band.assumingMemoryBound(to: UInt8.self)),
                                            UnsafeMutableRawPointer(y + rows.lowerBound * outWidth * cout), rows: rows.count * outWidth,
                                            panels: projectPanels,
                                            residual: residual ? x + rows.lowerBound * outWidth * cin : nil, kernels: kernels)
                        })
        }
    }
}
