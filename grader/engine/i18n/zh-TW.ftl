# 引擎的學生訊息（繁體中文，臺灣）。

## 這裡沒有評分的項目（src/check/gpu.rs）

not-graded-prefix = 沒有評分：
skipped-reason = 略過：{ $reason }
skipped-details = 沒有評分：{ $reason }。

## 整份作業（src/check/mod.rs）：無法編譯、被拒絕、沒有收下

hint-line = 提示：{ $hint }。
not-compiled-reason = 無法編譯：{ $error }
not-compiled-dependency-reason = 無法編譯：`{ $name }` 不是這個實驗作業的相依套件
not-compiled-dependency-hint = 提示：`{ $name }` 不是這個實驗作業的相依套件。正式評分用的是實驗作業自己的 Cargo.toml，所以你的程式在那裡不能使用它：請把它從 Cargo.toml 移除，改用實驗作業提供的套件寫程式。
not-compiled-outside-reason = 無法編譯：它在編譯時讀取了 crate 以外的檔案
not-compiled-harness-hint = 提示：錯誤出在評分程式的測試框架裡，它是用範本給的名稱和型別呼叫你的函式：請讓每個 `pub fn` 的名稱和簽章跟範本完全一樣。
not-compiled-details =
    程式無法編譯，所以什麼都無法評分。請先修好這個錯誤（執行 `cargo build` 可以看到所有錯誤）：
    { $error }{ $hint }
refused-reason = 拒絕評分：{ $file }:{ $line } 的 `{ $construct }`
refused-details = { $file }:{ $line }：實驗作業裡不允許使用 `{ $construct }`：{ $why }。沒有評分任何項目；請移除它，再執行一次 `cargo test`。
not-taken-reason = 拒絕評分：`{ $path }` 不是評分會收下的檔案
not-taken-details = { $refusal }。沒有評分任何項目；請在你的儲存庫裡修正後再繳交一次。

## 單一項目（src/check/mod.rs）：禁止與必須使用的名稱、panic、程式中止

forbidden-reason = `{ $function }` 使用了 `{ $name }`，這個項目不允許
forbidden-details = { $file }:{ $line }：`{ $function }`（或它呼叫的程式碼）使用了 `{ $name }`。這個項目評的是你自己的實作，所以這裡不能用 { $forbidden }：請自己寫迴圈。
missing-reason = `{ $function }` 必須使用 `{ $missing }`
missing-details = 你的原始碼裡沒有 `{ $missing }`：`{ $function }` 要以使用它的版本評分（{ $required }）。
gpu-unavailable = 無法在這台電腦上使用 GPU（{ $why }）
died-reason = `{ $function }` { $death }
died-details = `{ $function }` { $death }。
last-output = 最後的輸出：
todo-prefix = 還沒實作
todo-reason = 還沒實作：`{ $function }` 裡還留著 todo!()
todo-details = `{ $function }` 還沒實作（執行到了 todo!(){ $at }）。請把 todo!() 換成你的程式碼，再執行一次 `cargo test`。
panic-at = ，位置 { $location }
panic-hint-bounds = {" "}提示：有個索引超出了陣列的結尾；請對照 a.nrows()、a.ncols() 和 b.ncols() 檢查每個迴圈的上限。
panic-hint-overflow = {" "}提示：有個整數溢位了；請檢查索引的計算。
panic-hint-cuda = {" "}提示：CPU 項目執行時看不到任何 GPU，所以這個函式必須在 CPU 上計算（GPU 函式由它們自己的項目評分）。
panicked-reason = `{ $function }` 發生 panic{ $case }
panicked-details = `{ $function }` 發生 panic{ $case }{ $at }：{ $message }。{ $hint }
speed-wrong-shape = 它傳回的矩陣形狀不對（A·B 是 { $m }×{ $n }）
speed-contended-reason = 無法可靠量測：有其他程式正在使用這台機器
speed-contended-details = 在為你的程式計時的 { $rounds } 次嘗試中，其他程式每次都用掉了這台機器 { $cores } 個核心中的 { $least } 到 { $most } 個，量到的速度同樣反映了它們，而不只是你的程式。這一項不依這樣的量測評分：請在機器空閒時再評一次（關掉其他吃重的程式；如果是共用的機器，請告訴負責執行評分程式的人）。
speed-busy-note = 量測時，其他程式在 { $rounds } 次嘗試中每次都用掉了這台機器 { $cores } 個核心中的 { $least } 到 { $most } 個：在空閒的機器上，你的程式可能達到更高的等級。請在機器空閒時再評一次（關掉其他吃重的程式；如果是共用的機器，請告訴負責執行評分程式的人）。
speed-wrong-reason = 結果錯誤，所以速度不算分
speed-wrong-details = `{ $function }` 在 { $m }×{ $k }×{ $n } 算出錯誤的結果：{ $summary }。只有正確的乘積才能拿速度分數。
timed-wrong-reason = 第 { $run } 次計時執行的結果錯誤
timed-wrong-details = `{ $function }` 在第 { $run } 次計時執行給出錯誤的結果（每次執行都乘新的矩陣，而且每個結果都會檢查）：只有正確的結果才能拿速度分數。

## 工作程序怎麼中止的（src/supervisor.rs）

timed-out-marker = 秒內完成而被停止
died-timed-out = 沒有在 { $secs } 秒內完成而被停止：請找找看有沒有永遠不會結束的迴圈（計數器從沒增加、迴圈條件寫錯）
died-stack = 堆疊溢位了：某個函式不停地呼叫自己，或是在堆疊上放了非常大的陣列（請改用 Vec 或 Array2）
died-segfault = 因為區段錯誤（segmentation fault，不合法的記憶體存取）而當掉：請檢查 `unsafe` 程式碼和原始指標
died-abort = 中止了（panic 處理中又發生 panic、配置記憶體失敗，或明確呼叫了 `process::abort`）
died-fpe = 因為算術錯誤（SIGFPE）而當掉
died-killed = 被強制結束（SIGKILL）：可能是記憶體用完了
died-file-size = 寫入單一檔案（或印出）超過 { $mib } MiB 而被停止（SIGXFSZ）：請找找看迴圈裡有沒有輸出
died-signal = 被訊號 { $signal } 結束
died-memory = 記憶體用完了：它要求的記憶體超過受評函式能用的 { $gib } GiB（請找找看有沒有在迴圈裡不斷變大的 Vec 或矩陣，或是比輸入大很多的）
died-tampered = 自己寫入了評分程式的結果檔，這是竄改評分：這個項目 0 分
died-disk = 寫入磁碟超過 { $gib } GiB（或超過 { $files } 個檔案）而被停止：受評函式沒有理由寫檔案；請找找看迴圈裡有沒有寫入
died-processes = 啟動了超過 { $processes } 個行程而被停止：受評函式沒有理由啟動行程
died-exited = 在評分程式拿到結果前就結束了程式（結束碼 { $code }）：實驗作業的程式碼裡不要呼叫 `std::process::exit`

## GPU 項目（src/check/gpu.rs）

judge-panicked-reason = 評分程式無法評判這一項（評分程式的錯誤：請回報）
judge-panicked-details = 評分程式執行了 `{ $function }`，但無法評判它回傳的結果：評分程式自己的檢查出錯了（{ $message }）。這是評分程式的錯誤，不一定是你程式碼的問題：請附上這段訊息和種子碼回報。其他項目照常評分。
report-unfit-reason = 執行你程式碼的行程送回的結果不符合這一項
report-unfit-details = 評分程式執行了 `{ $function }`，但執行你程式碼的行程送回的報告不符合這一項（{ $message }）。會寫入評分程式檔案或記憶體的程式碼會造成這種情況；如果你的程式沒有這樣做，這是評分程式的錯誤：請附上這段訊息和種子碼回報。其他項目照常評分。
too-large-reason = `{ $function }` 回傳的結果遠大於這一項要求的大小
too-large-details = `{ $function }` 回傳的結果超過 { $size } MiB，但這一項所有案例的正確答案最多只有 { $bound } MiB，所以沒有檢查它們。請對照題目描述檢查它回傳的形狀（m×k 矩陣乘以 k×n 矩陣的結果是 m×n）。
untrusted-claim-reason = 評分程式無法信任這份回報
counts-missing = 無法計算你的程式在 GPU 上做了哪些工作（回報裡沒有評分程式設定好的計數）
untrusted-claim-details = 執行 `{ $function }` 的行程回報說評分程式{ $could_not }。一個項目是否評分，由評分程式依它自己設定的環境決定，從不採信執行你程式碼的行程所說的話，所以這一項算作失敗，並仍計入滿分。如果你的程式沒有做任何特別的事，這不是你程式碼的問題：請告訴負責執行評分程式的人。
needs-real-gpu = 需要真正的 GPU（模擬器的速度無法代表 GPU 的速度）
race-reason = { $what }（由模擬器的競爭檢查發現）
race-details =
    `{ $function }`：GPU 模擬器發現 { $report }
    在 GPU 上，一個 kernel 的執行緒是同時執行的，所以競爭情況（race）有時會給出錯誤的結果，即使這次剛好算對：在消除競爭之前，這個項目拿不到正確性的分數。
gpu-hint-bounds = 有個執行緒讀寫到緩衝區外面。當 m 或 n 不是區塊大小的倍數時，最後幾個區塊的執行緒會落在 C 外面：請用 `if (row < m && col < n)` 保護 kernel 的主體
gpu-hint-compile = kernel 沒有編譯成功：請閱讀上面編譯器的訊息（行號是你 kernel 原始碼字串裡的行號）
gpu-hint-launch = 這個啟動設定不被允許：每個區塊最多 1024 個執行緒、最多 48 KiB 的共享記憶體
gpu-hint-other = 請閱讀上面的錯誤：它指出了失敗的 CUDA 呼叫
gpu-hint-cublas = 出錯的是 cuBLAS 呼叫，不是你自己的 kernel：上面的訊息指出了是哪個運算元。cuBLAS 以行（column）為主的順序讀取矩陣，所以列主序的 A·B 要寫成 Cᵀ = Bᵀ·Aᵀ：先傳 B、再傳 A，m 和 n 互換（m = n、n = m），lda = n、ldb = k、ldc = n。運算元超出它的緩衝區，通常是 m 和 n（或某個運算元的大小）弄反了；被拒絕的 leading dimension 則是比該運算元在行主序下的列數還小
gpu-error-details = `{ $function }` 傳回了錯誤{ $case }：{ $error }
emulator-reported =
    GPU 模擬器回報：
    { $notes }
gpu-error-compile-reason = kernel 無法編譯：{ $line }
gpu-error-reason = GPU 上發生錯誤：{ $first }
timer-not-product-details = `{ $function }` 沒有把 A·B 留在 C 裡（{ $m }×{ $k }×{ $n }）：{ $summary }。
timer-not-product-reason = 計時的呼叫結束後，C 不是 A·B
timer-your-multiplication = 你的矩陣乘法
timer-passed-reason = 前後都有同步
timer-passed-details = `{ $function }` 對 { $device } ms 的 GPU 工作（{ $size }）量到 { $reported } ms，之前還排了 { $queued } ms 的工作：它在兩側都有等待 GPU。
timer-too-long-reason = 回報的時間比整個呼叫還長
timer-too-long-details = `{ $function }` 回報 { $reported } ms，但依評分程式在你的程式外面的時鐘，整個呼叫只花了 { $outer } ms。只回報你的時鐘量到的時間（在工作開始前啟動時鐘，工作結束後立刻讀取）。
timer-measured = 你的時鐘讀到 { $reported } ms；GPU 在{ $work }上花了 { $device } ms，而評分程式在呼叫前剛排入了 { $queued } ms 的工作
timer-stopped-early-reason = 時鐘在 GPU 完成之前就停了
timer-stopped-early-details = { $measured }。時鐘在 GPU 完成之前就停了：kernel 啟動會立刻返回，所以請在啟動之後、讀取時鐘之前呼叫 `stream.synchronize()`。如果你已經這麼做了，請確認計時的是你回傳其 C 的那次啟動，而不是之前一次小規模的暖身啟動。
timer-unit-slip-reason = 回報的時間大約是 GPU 實際時間的一千倍
timer-unit-slip-details = `{ $function }` 回報了 { $reported } ms，而 GPU 花在{ $work }上的時間是 { $device } ms：多了 { $ratio } 倍。這是單位弄錯了：把秒當成毫秒，或在需要秒的地方傳入毫秒數（例如 `Duration::from_secs_f64(elapsed_ms)`）。請原封不動地回傳你的計時器量到的 `Duration`，也就是 `start.elapsed()`。
timer-started-late-reason = 時鐘在之前的 GPU 工作完成之前就開始了
timer-started-late-details = { $measured }。時鐘在之前的 GPU 工作完成之前就開始了，所以把那些工作也算進去了：請在啟動時鐘之前呼叫 `stream.synchronize()`。
freivalds-summary = 對一個隨機向量 x，C·x 和 A·(B·x) 不同（Freivalds 方法檢查了每一列），所以 C 裡有些元素是錯的
gpu-speedup-reason = CPU 的 { $speedup }×
gpu-speedup-details = 透過 `{ $function }` 在 GPU 上做一次矩陣乘法（運算元已經在 GPU 上，和課堂上的計時方式一樣），在 { $m }×{ $k }×{ $n } 的速度是 ndarray CPU 乘法的 { $speedup }×（{ $samples } 組成對樣本的中位數，用評分程式自己的時鐘和同步量測）。如果這個數字偏低，請只編譯一次 kernel，不要每次呼叫都編譯。
device-no-library = 在沒有安裝 CUDA 函式庫時
device-no-gpu = 在有 CUDA 驅動程式但沒有 GPU 時
device-with-gpu = 在有 GPU 時
device-gpu-present = 在有 GPU 時
device-the-gpu = GPU
device-the-cpu = CPU
device-checked-no-library = 沒有 CUDA 函式庫 → CPU
device-checked-no-gpu = 有驅動程式但沒有 GPU → CPU
device-checked-gpu = 有 GPU → GPU
device-no-way = 這裡沒辦法模擬有 GPU 和沒有 GPU 的電腦
device-passed-reason = 有沒有 GPU 都選對了
device-passed-details = `{ $function }`：{ $checked }。
device-context-reason = { $situation }：{ $reason }
device-context-details =
    { $situation }：{ $details }
    提示：建立 context 之前先檢查 `cudarc::driver::sys::is_culib_present()`，並把 `CudaContext::new(0)` 傳回的錯誤當成「沒有 GPU」。
device-wrong-reason = { $situation }，它選了 { $chose }
device-wrong-details = `{ $function }` { $situation }選了 { $chose }。
bench-cpu-reason = CPU 時間不是量測出來的
bench-cpu-details = `{ $function }` 對一個花了 { $outer } ms 的呼叫傳回 { $time } ms 的 CPU 時間。
bench-no-gpu-reason = 有 GPU 卻沒有 GPU 時間
bench-no-gpu-details = `{ $function }` 沒有傳回 GPU 時間，但這裡有 GPU（{ $backend }）可以用。
bench-gpu-reason = GPU 時間不是量測出來的
bench-gpu-details = `{ $function }` 對一個花了 { $outer } ms 的呼叫傳回 { $time } ms 的 GPU 時間。
bench-gpu-part = ，GPU { $time } ms
bench-passed-reason = 兩邊都有計時
bench-passed-details = `{ $function }` 量到 CPU { $time } ms{ $gpu }。
bench-timer-fails-reason = 這裡不扣分：{ $timer } 自己就會失敗
bench-timer-fails-details = `{ $function }` 在 GPU 上傳回錯誤（{ $error }）。它所呼叫的 `{ $timer }` 在新的行程裡單獨執行也會失敗（{ $own }）；這個錯誤由計時的項目（gpu_timer_sync）扣分，只扣一次。等計時函式能執行後，這個項目才會檢查。
not-copied-back = 它在第 { $case } 個案例傳回的 { $values } 個值裡，有 { $count } 個在呼叫期間從沒從 GPU 記憶體複製回來：它們是在 CPU 上算的
uploaded-back = 它在第 { $case } 個案例傳回的 { $values } 個值裡，有 { $count } 個正是這次呼叫自己上傳到 GPU 的值：它們是在 CPU 上算好，只是經過 GPU 而已
not-from-device-reason = 結果不是在 GPU 上算出來的
not-from-device-details = `{ $function }` 在 GPU 上啟動了工作，但{ $found }。結果必須是你的 kernel（或 cuBLAS）寫進裝置記憶體、再用 `clone_dtoh` 複製回來的值：請在 GPU 上計算 C 並傳回它。

## 乘積與參考答案的比較（src/check/matmul.rs）

shape-transposed-values = 結果被轉置了：C[i][j] 裡放的是 C[j][i] 的值；寫入 C 時請把列和行的索引對調
shape-swapped = 結果的列數和行數對調了：C 必須是 m×n（A 的列數 × B 的行數）
shape-size-from = A 是 { $m }×{ $k }、B 是 { $k }×{ $n }，所以 C 必須是 { $m }×{ $n }：請用 a.nrows() 和 b.ncols() 決定 C 的大小
shape-wrong = C 的形狀是 { $rows }×{ $cols }，但應該是 { $m }×{ $n }
value-wrong = C[{ $i }][{ $j }] 應該是 { $expected }，卻是 { $got }（容許誤差 { $bound }）；{ $total } 個值裡有 { $bad } 個錯誤，最大的誤差是 { $worst }，在 C[{ $wi }][{ $wj }]
diagnose-nan = C[{ $i }][{ $j }] 是 { $value }：NaN 或無限大通常來自讀取從沒設定過的記憶體（沒有初始化的緩衝區），或是除以零
diagnose-zeros = 每個值都是 0：結果從沒被寫入，或是寫到了一份沒有傳回的複本
diagnose-transposed = 結果被轉置了：C[i][j] 裡放的是 C[j][i] 的值；請檢查哪個索引走列、哪個索引走行
diagnose-scaled-k = （剛好是 K = { $k }：是不是內層迴圈每一步都多加了一次什麼？）
diagnose-scaled = 每個值都是正確值的 { $factor }×{ $extra }：乘積是對的，但被放大或縮小了；請找找看有沒有多乘的係數、沒有歸零的總和，或是被累加兩次的值
diagnose-block = 只有 C 左上角 { $rows }×{ $cols } 的部分是對的：最後一個完整的 { $block } 區塊之後的列和行不見了或是錯的。當大小不是區塊的倍數時，請處理剩下的部分（每個區塊結束在 min(start + { $block }, size)）

## CPU 計時器（src/check/timer.rs）與計時執行（src/check/timed.rs）

cpu-timer-none = 沒有收到任何計時結果
cpu-timer-never-ran = { $function } 從沒執行交給它的工作
cpu-timer-never-ran-hint = 在啟動和停止時鐘之間呼叫那個閉包（`work()`）
cpu-timer-value = { $function } 沒有傳回工作產生的值
cpu-timer-value-hint = 把工作的結果和經過的時間一起傳回
cpu-timer-short = { $function } 回報 { $reported } ms，但工作實際執行了 { $inner } ms
cpu-timer-short-hint = 在呼叫工作之前啟動時鐘（Instant::now()），在工作返回之後讀取（elapsed()）
cpu-timer-long = { $function } 回報 { $reported } ms，比整個呼叫花的 { $outer } ms 還長
cpu-timer-long-hint = 在函式裡用 std::time::Instant 量測，而且只回報你量到的時間
cpu-timer-sample = { $work } ms 的工作量到 { $reported } ms
stopped-elsewhere-reason = 程式在評分程式的檢查點以外的地方自己停了下來
stopped-elsewhere-details = 在為 `{ $function }` 計時時，它的程式在評分程式自己的程式碼絕不會停下的地方停止或結束了（來自你程式碼的停止訊號或結束）。這是竄改計時：這個項目 0 分。

## GPU 項目在哪裡執行（src/gpu/mod.rs）

backend-real = 真正的 GPU：{ $name }
backend-no-emulator = 沒有 GPU，CPU 模擬器也無法使用（{ $why }）
backend-emulated-unusable = 模擬的 GPU（真正的 GPU 無法使用：{ $why }）
backend-emulated = 模擬的 GPU
backend-off = GPU 模式已關閉
unchecked-run-reason = 無法確認這次執行做過競爭檢查
unchecked-run-details = `{ $function }` 在 GPU 模擬器上、以會檢查 kernel 競爭情況與 GPU 記憶體外存取的方式執行，但模擬器對這次執行的紀錄無法證明檢查過：{ $why }。無法證明檢查過的執行拿不到正確性的分數。如果你的程式沒有做任何特別的事，這不是你程式碼的問題：請告訴負責執行評分程式的人。
unconfined-run-reason = 評分程式無法確認這次執行的 kernel 只存取 GPU 記憶體
unconfined-run-details = `{ $function }` 在 GPU 模擬器上以計時方式執行，這時每個 kernel 只能讀寫 GPU 記憶體，但模擬器對這次執行的紀錄無法證明這一點：{ $why }。無法證明如此的執行拿不到分數。如果你的程式沒有做任何特別的事，這不是你程式碼的問題：請告訴負責執行評分程式的人。
bench-cpu-unchecked-reason = 無法檢查 CPU 時間
bench-cpu-unchecked-details = `{ $function }` 回傳後，評分程式以 { $n }×{ $n }×{ $n } 執行 `matmul_fast`，用它自己的量測來檢查 CPU 時間，但這些執行沒有完成（發生 panic）。評分程式無法自己量測同樣的工作時，CPU 時間拿不到分數。
bench-cpu-below-details = `{ $function }` 回傳的 CPU 時間是 { $time } ms，但在這台機器上，{ $n }×{ $n }×{ $n } 的 `matmul_fast` 不可能少於 { $own } ms：評分程式在呼叫之後自己執行並量測了 { $runs } 次。請回報你的時鐘在乘法前後量到的時間：在 `matmul_fast` 之前呼叫 `Instant::now()`，之後呼叫 `elapsed()`。
bench-cpu-checked = 評分程式自己以 { $n }×{ $n }×{ $n } 執行了 `matmul_fast` { $runs } 次：在這裡每次至少要 { $own } ms。
bench-gpu-no-work-details = `{ $function }` 回傳的 GPU 時間是 { $time } ms，但呼叫期間 GPU 沒有執行任何 kernel 或 cuBLAS 運算：請在裝置上量測一次真正的乘法（對已複製過去的運算元呼叫 `{ "time_gpu_matmul" }`）。
bench-gpu-below-details = `{ $function }` 回傳的 GPU 時間是 { $time } ms，但它啟動的乘法在裝置上執行了 { $device } ms，而單獨呼叫 `{ $timer }` 時量到的時間是對的：請回報 `{ $timer }` 為這次乘法回傳的時間。
bench-gpu-timers-own = GPU 時間比裝置上的工作還短，而單獨呼叫 `{ $timer }` 也量得太短或失敗：這個錯誤由計時器的項目（gpu_timer_sync）扣分，這裡不重複扣。
