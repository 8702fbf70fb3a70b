# 矩陣乘法實驗（matmul）給學生看的訊息，繁體中文（臺灣）。

## 單一乘積（judge.rs、kinds.rs）

case-on = ，在第 { $case } 個案例（共 { $total } 個；A 是 { $m }×{ $k }，B 是 { $k }×{ $n }）
case = 第 { $case } 個案例（共 { $total } 個；A 是 { $m }×{ $k }，B 是 { $k }×{ $n }）
no-gpu-work-reason = GPU 上沒有任何工作：沒有啟動 kernel，也沒有呼叫 cuBLAS
no-gpu-work-details = `{ $function }` 傳回了正確的結果，但沒有啟動任何 kernel，也沒有呼叫 cuBLAS：它是在 CPU 上算的。請在 GPU 上做矩陣乘法（在 stream 上啟動你的 kernel，或呼叫 cuBLAS）。
all-right-reason = { $total } 個案例全對
all-right-details = `{ $function }` 在全部 { $total } 個案例都正確：{ $shapes }。
wrong-details = `{ $function }` 在{ $case }算錯了：{ $summary }。
wrong-everywhere = 每個有傳回結果的案例都是錯的。
right-on = { $total } 個案例中對了 { $right } 個：{ $shapes }。
wrong-reason = { $case }的結果錯誤
dim-m = m（A 的列數）
dim-k = k（A 的行數）
dim-n = n（B 的行數）
size-pattern = 只有在 { $dim } 是 { $block } 的倍數時結果才正確：最後一個完整的 { $block } 區塊之後剩下的列或行沒有被計算。請讓每個區塊結束在 min(start + { $block }, size)，或另外處理剩下的部分
cpu-timer-passed-reason = 剛好只計時了工作本身
cpu-timer-passed-details = `{ $function }`：{ $line }。
cpu-timer-failed-details =
    { $what }。
    提示：{ $hint }。
cpu-speedup-measured = 在 { $m }×{ $k }×{ $n } 是評分程式單純三層迴圈的 { $speedup }×（{ $samples } 組成對樣本的中位數：基準 { $baseline } ms，你的 { $yours } ms，也就是在一次基準執行的時間內、用新矩陣執行多次的中位數；由評分程式在你的程式外面計時，每次執行扣掉交付矩陣用的 { $overhead } ms）
cpu-speedup-reason = 比單純版本快 { $speedup }×
cpu-speedup-tier = `{ $function }` 的速度是{ $measured }：達到第 { $tier } 級（共 { $tiers_count } 級；各級：{ $tiers }）。
cpu-speedup-below-reason = { $speedup }×：低於第一級（{ $first }×）
cpu-speedup-below-details = `{ $function }` 的速度是{ $measured }，低於第一級（各級：{ $tiers }）。提示：調整迴圈順序，讓最內層迴圈沿著 B 和 C 的列走（i、k、j 的順序），處理連續的切片，或把各列分給多個執行緒。

## GPU 計時器的工作程序端（gpu.rs、batched.rs）

gpu-setup-failed = 評分程式的 GPU 設定失敗：{ $error }
gpu-error-after = `{ $function }` 執行之後 GPU 回報了錯誤：{ $error }。讀寫超出緩衝區的 kernel 會讓之後所有的 GPU 呼叫都失敗；請在你的函式裡同步並檢查結果，就能在那裡看到錯誤

## 批次乘積（batched.rs、batched_judge.rs）

batch-case = 第 { $case } 個案例（共 { $total } 個；一批 { $batch } 個：A[b] 是 { $m }×{ $k }，B[b] 是 { $k }×{ $n }）
batch-case-on = ，在{ $case }
batch-swapped = 每個矩陣的列數和行數都對調了：C[b] 必須是 m×n（A[b] 的列數 × B[b] 的行數）
batch-size-from = A 是 { $batch }×{ $m }×{ $k }、B 是 { $batch }×{ $k }×{ $n }，所以 C 必須是 { $batch }×{ $m }×{ $n }：請用 a.dim() 和 b.dim() 決定 C 的大小（先是批次，再來是 A 的列數，然後是 B 的行數）
batch-shape-wrong = C 的形狀是 { $gb }×{ $gm }×{ $gn }，但應該是 { $batch }×{ $m }×{ $n }（批次 × m × n）
batch-freivalds = 對一個隨機向量 x，C[b]·x 和 A[b]·(B[b]·x) 不同（Freivalds 方法檢查了每一列），所以 C[b] 裡有些元素是錯的
batch-in = 在 0..{ $batch } 中的第 { $z } 批，{ $summary }
batch-more = 還有 { $count } 個
batch-zeros-one = 0..{ $batch } 中的第 { $which } 批全是 0，其他批都是對的：第 { $which } 批從沒被計算。請讓你的迴圈或 grid 涵蓋批次裡的每個矩陣：CPU 上 b 走過 0..batch；GPU 上 grid 的 z 大小等於批次數，kernel 裡用 `z < batch` 保護
batch-zeros-many = 0..{ $batch } 中的第 { $which } 批全是 0，其他批都是對的：第 { $which } 批從沒被計算。請讓你的迴圈或 grid 涵蓋批次裡的每個矩陣：CPU 上 b 走過 0..batch；GPU 上 grid 的 z 大小等於批次數，kernel 裡用 `z < batch` 保護
batch-stride = 第 0 批是對的，之後每一批都錯：第 b 批的位移不對（批次的間距錯了）。第 b 個矩陣從 A 的第 b·m·k 個數、B 的第 b·k·n 個數、C 的第 b·m·n 個數開始：每一批跨過一整個矩陣，不是一列
batch-all-zeros = C 的每個矩陣都全是 0：結果從沒被寫入，或是寫到了一份沒有傳回的複本
batch-stops-early = 第 0..{ $first } 批是對的，第 { $first }..{ $batch } 批是錯的：迴圈或 grid 在批次結束之前就停了
batch-no-gpu-work-details = `{ $function }` 傳回了正確的結果，但沒有啟動任何 kernel，也沒有呼叫 cuBLAS：它是在 CPU 上算的。請在 GPU 上做整個批次（用 3-D grid 啟動一次，或呼叫一次 strided-batched cuBLAS）。
batch-all-right-details = `{ $function }` 在全部 { $total } 個案例的每個矩陣都正確：{ $shapes }。
batch-wrong-in-reason = { $case }的第 { $z } 批結果錯誤
batch-wrong-shape-reason = { $case }的形狀錯誤
batch-calls-note = 注意：`{ $function }` 為 { $batches } 個批次、總共 { $matrices } 個矩陣做了 { $launches } 次 kernel 啟動和 { $blas } 次 cuBLAS 呼叫：每個矩陣一次呼叫。在 GPU 上讓批次變快的方法是：每個批次用 3-D grid 啟動一次（blockIdx.z 選矩陣），或呼叫一次 strided-batched cuBLAS。
batch-calls-reason = 結果正確，但每個矩陣各呼叫一次，而不是整個批次一次
batch-calls-graded = 這個函式的說明要求整個批次只呼叫一次，不要每個矩陣各一次。模擬器量不出批次的速度，所以這裡用計算呼叫次數來評這條規則：扣 { $points } 分中的 { $lost } 分。（在真正的 GPU 上，改由批次速度的項目來量。）
batch-timer-wrong-details = `{ $function }` 沒有為這批 { $batch } 個 { $m }×{ $k }·{ $k }×{ $n } 的乘積在 C 裡留下 C[b] = A[b]·B[b]：{ $summary }。
batch-timer-wrong-reason = 計時的呼叫結束後，C[{ $z }] 不是 A[{ $z }]·B[{ $z }]
batch-timer-shape-reason = 計時的呼叫結束後，C 的形狀不對
batch-timer-work = 你的批次矩陣乘法
batch-timer-size = { $batch } 個 { $m }×{ $k }·{ $k }×{ $n } 的乘積
batch-speed-wrong-reason = 有一次計時執行的結果錯誤，所以速度不算分
batch-speed-wrong-details = `{ $function }` 的第 { $run } 次計時執行（{ $batch } 個 { $m }×{ $k }·{ $k }×{ $n } 的乘積）給出錯誤的結果：{ $summary }。只有正確的批次才能拿速度分數。
batch-speedup-reason = 單一乘積迴圈的 { $speedup }×
batch-speedup-details = 透過 `{ $function }` 計算一批 { $batch } 個 { $m }×{ $k }·{ $k }×{ $n } 的乘積（運算元已經在 GPU 上），速度是評分程式用 { $batch } 次單一 cuBLAS 乘積的迴圈的 { $speedup }×（{ $samples } 組成對執行的中位數，用評分程式的時鐘，前後都等 GPU 清空；各級：{ $tiers }）。如果這個數字偏低，請用一次啟動（3-D grid）或一次 strided-batched cuBLAS 呼叫做完整個批次，並且只編譯一次 kernel，不要每次呼叫都編譯。

## 速度圖的線 (chart.rs)

chart-line-yours = 你的 { $function }
chart-line-naive = 評分程式的單純三層迴圈
chart-line-yours-gpu = 你的 { $function }（GPU）
chart-line-ndarray = ndarray 的乘法（CPU）
not-from-a-and-b-reason = 這些乘積不是 GPU 由 A 與 B 算出來的
not-from-a-and-b-details = `{ $function }` 回傳的乘積是對的，但評分程式把 { $case } 在裝置上的工作換上 A 的其他值再跑一次時，{ $why } 在 CPU 上算好、只經過 GPU 的乘積，A 改變時仍然不變；在裝置上由 A 與 B 算出的乘積會跟著 A 改變。請在裝置上計算乘積：在你的 kernel 裡讓每個執行緒對 k 做迴圈，或呼叫一次 cuBLAS。
replay-differs = 裝置的結果沒有跟著改變（{ $summary }）。
replay-faulted = 有一個 kernel 當掉了：你的 kernel 是否從 A 的值讀取索引或長度？
too-little-work-reason = GPU 為這些乘積做的運算遠遠不夠
too-little-work-details = `{ $function }` 回傳的乘積是對的，但裝置做的工作遠少於所需：所有案例共需 { $needed } 次乘加，而它的 kernel 只讀了 { $read } 個值，cuBLAS 做了 { $blas } 次乘加。kernel 每做一次乘加都要讀運算元（或每個暫存器分塊讀幾個）；在 CPU 上算好、只經過 GPU 的結果，每個元素只讀一個值。請在裝置上計算乘積：在你的 kernel 裡讓每個執行緒對 k 做迴圈，或呼叫一次 cuBLAS。
coverage-launch = 你啟動 `{ $kernel }` 用了 { $gx }×{ $gy } 個 block、每個 { $bx }×{ $by } 個 thread，而 C 正好只在這些 thread 碰得到的左上角 { $rows }×{ $cols }（全部是 { $m }×{ $n }）是對的：{ $what }。{ $cause }
coverage-short-x = x 方向有 { $threads } 個 thread，C 卻有 { $n } 欄
coverage-short-y = y 方向有 { $threads } 個 thread，C 卻有 { $m } 列
coverage-too-small = grid 太小了：依 C 的大小決定 grid，grid_dim = (n.div_ceil(blockDim.x), m.div_ceil(blockDim.y), 1)（無條件進位），並保留 kernel 裡的 `if (row < m && col < n)`，讓超出邊界的 thread 不做事
coverage-turned = 這個 grid 是照「躺倒的 C」算的（x 用了 m = { $m } 列，y 用了 n = { $n } 欄）；x 應該跑 C 的欄：grid_dim = (n.div_ceil(blockDim.x), m.div_ceil(blockDim.y), 1)
coverage-swapped-what = x 方向的 thread 碰到的是列，y 方向的碰到的是欄
coverage-swapped = 也就是 kernel 從 x 取列、從 y 取欄，grid 卻把 C 的欄放在 x 上。請用 col = blockIdx.x * blockDim.x + threadIdx.x、row = blockIdx.y * blockDim.y + threadIdx.y
