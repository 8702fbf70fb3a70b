# 訓練實驗（training）給學生看的訊息，繁體中文（臺灣）。

## 案例（kinds.rs）

case-on = ，在第 { $case } 個案例（共 { $total } 個；{ $shape }）
shape-init = { $inputs } 個輸入、{ $outputs } 個輸出
shape-layer = 一批 { $batch } 筆、{ $inputs } 個輸入、{ $outputs } 個輸出
shape-extreme = 極端值
shape-model = 一批 { $batch } 筆
shape-batches = n = { $n }，batch_size = { $batch }
shape-loader = { $n } 筆樣本，每批 { $batch } 筆

## 每個判定（judge.rs）

passed-details = `{ $function }`：{ $reason }。

## 正確答案的說明（judge.rs）

init-right = 形狀正確，權重和偏差依文件在 ±1/√in 上均勻抽樣（先權重、後偏差），梯度為零，而且可以用種子重現（{ $cases } 個案例）
right-on-all = 全部 { $cases } 個案例都正確
backward-right = 在全部 { $cases } 個案例中，輸入的梯度正確，權重和偏差的梯度也正確地累加，而且和中央差分的結果一致；zero_grad 把兩者都清除
loss-right = 全部 { $cases } 個案例都正確，包括極端值
loss-grads-right = 全部 { $cases } 個案例都正確，包括極端值，而且和中央差分的結果一致；zero_grad 把兩者都清除
model-composes = 在全部 { $cases } 個案例中，forward、loss、backward、zero_grad 和 predict 都正確地組合了你自己的層、激活函式和損失函式（其中 { $composed } 個案例裡，這些元件算出的值和參考答案不同：那由它們自己的項目扣分，這一項不扣）
model-right = 在全部 { $cases } 個案例中，forward、loss、backward（每個參數的梯度）、zero_grad 和 predict 都正確
optimizer-right = { $steps } 步都符合公式
batches-right = 在全部 { $cases } 個案例中，都是 0..n 的隨機打亂分割，每個 epoch 都不同，而且可以重現
epoch-right = 從評分程式給的起點和批次順序開始，一個 epoch（{ $batches } 個批次）和參考答案一致：參數和參考答案的差距在移動距離的 { $within } 以內（取隱藏單元的中位數），平均損失 { $loss }
accuracy-right = 在 { $examples } 筆樣本上是 { $expected }，符合預期

## 張量與參考答案的比較（compare.rs）與對應的判定（judge.rs）

mismatch-shape = `{ $name }` 是 { $rows }×{ $cols }，應該是 { $erows }×{ $ecols }：請檢查維度的順序（權重是 out × in，一個批次是每筆樣本一列）
mismatch-not-finite = `{ $name }`[{ $i }, { $j }] 是 { $got }，應該是一個數字：請找找看有沒有對 0 取 log、除以 0，或是 exp 溢位
mismatch-value = `{ $name }`[{ $i }, { $j }] 是 { $got }，應該是 { $expected }（{ $of } 個值裡有 { $off } 個不對；這是差最多的一個）
wrong-shape-reason = `{ $name }` 的形狀不對{ $case }
not-finite-reason = `{ $name }` 是 NaN 或無限大{ $case }
wrong-value-reason = `{ $name }` 不對{ $case }
mismatch-details = `{ $function }`{ $case }：{ $mismatch }。

## Linear::new（judge.rs）

init-shapes-reason = 形狀不對{ $case }
init-shapes-details = `Linear::new({ $inputs }, { $outputs }, rng)`：權重是 { $rows }×{ $cols }，偏差有 { $biases } 個值；應該是 { $outputs }×{ $inputs } 的權重（out × in，和 PyTorch 一樣）和 { $outputs } 個偏差。
init-shapes-hint = nn.Linear(in, out) 把權重存成 out × in
init-grads-reason = 梯度不是零{ $case }
init-grads-details = 新的層的 weight_grad 和 bias_grad 必須是形狀和權重、偏差相同的零。
init-grads-hint = Array2::zeros((out, in)) 和 Array1::zeros(out)
init-bound-reason = `{ $name }` 超出 ±1/√in{ $case }
init-bound-details = `Linear::new({ $inputs }, { $outputs }, rng)`：`{ $name }` 裡有 { $value }，超出了 ±1/√{ $inputs } = ±{ $bound }。
init-bound-hint = PyTorch 從 [−1/√in, 1/√in) 均勻抽樣每個權重和偏差：rng.random_range(-bound..bound)
init-uniform-reason = 權重不是在 ±1/√in 上均勻分布{ $case }
init-uniform-details = `Linear::new({ $inputs }, { $outputs }, rng)`：權重的平均是 { $mean }，有 { $beyond }% 超過界限的一半；在 ±{ $bound } 上均勻分布的值，平均 ≈ 0，而且有 50% 超過一半。
init-uniform-hint = 用 rng.random_range(-bound..bound) 抽每個權重，不要用常態分布或更窄的範圍
init-same-reason = 每個權重都一樣{ $case }
init-same-details = 每個權重都是同一個值：所有單元起點都一樣的層，學到的也會一樣。
init-same-hint = 為每個權重抽一個新的隨機值
init-not-reproducible-reason = 無法用亂數產生器重現{ $case }
init-not-reproducible-details = 兩個種子相同的亂數產生器給出了不同的層：層必須從傳入的 `rng` 抽樣（不能用其他亂數來源），這樣同一個種子每次都會得到相同的模型。
init-from-rng-hint = 每個值都從 `rng` 參數抽樣
init-other-seed-reason = 換了種子卻得到相同的層{ $case }
init-other-seed-details = 另一個種子的亂數產生器給出了相同的權重：權重必須來自 `rng` 參數。
init-weights-draws-reason = 權重不是照文件說明抽樣的{ $case }
init-weights-draws-hint = bound = 1.0 / (inputs as f32).sqrt()，然後一列一列抽權重，每個都用 rng.random_range(-bound..bound)（Array2::from_shape_simple_fn），在偏差之前
init-biases-zero-reason = 偏差全都是 0{ $case }
init-biases-zero-hint = nn.Linear 也會抽樣偏差：在權重之後，每個都用 rng.random_range(-bound..bound)
init-biases-draws-reason = 偏差不是照文件說明抽樣的{ $case }
init-biases-draws-hint = 在權重之後、從同一個 rng 抽偏差，每個都用 rng.random_range(-bound..bound)
init-biases-zero-what = 偏差全都是 0；
init-draws-details = { $call }：{ $what }{ $mismatch }。

## Linear::forward（judge.rs）

forward-no-bias-hint = 輸出是沒有加偏差的 x·Wᵀ：請在每一列加上 b
forward-hint = y = x·Wᵀ + b：x 是 batch × in，W 是 out × in，所以要乘 W 的轉置（`x.dot(&self.weight.t())`），再在每一列加上偏差

## Linear::backward、激活函式與損失函式（judge.rs）

returned-input-gradient = 傳回的輸入梯度
backward-weight-only-batch = weight_grad 裡只有這個批次的梯度：backward 必須把梯度「加」上去（`+=`），就像 loss.backward() 會一直累加到 zero_grad 為止
backward-bias-missing = bias_grad 沒有改變：少了偏差的梯度（加上 grad_output 每一行的總和，`grad_output.sum_axis(Axis(0))`）
backward-bias-only-batch = bias_grad 裡只有這個批次的梯度：backward 必須把梯度「加」上去（`+=`）
backward-weight-hint = dL/dW = grad_outputᵀ · x（out × in），加到 weight_grad 上
backward-bias-hint = dL/db 是 grad_output 每一行的總和，加到 bias_grad 上
backward-input-hint = dL/dx = grad_output · W（batch × in）
central-differences-hint = 這和中央差分 (f(x+h) − f(x−h)) / 2h 的結果不一致
relu-hint = relu(x) = max(x, 0)，逐元素計算
relu-backward-hint = 在 ReLU 的輸入 x > 0 的地方梯度照常通過，在 x ≤ 0 的地方是 0：grad_output × (x > 0)
sigmoid-hint = σ(x) = 1 / (1 + e^−x)；x < 0 時改用 e^x / (1 + e^x)，才不會溢位
relu-backward-unchanged-hint = 梯度原封不動地通過了：ReLU 在 x ≤ 0 的地方會擋住梯度
relu-backward-zero-hint = 在 x 剛好是 0 的地方梯度也是 0（PyTorch 的選擇）：請判斷 x > 0，而不是 x ≥ 0
bce-extreme-hint = 當 p 剛好是 0 或 1 時，ln(0) 是 −∞：像 PyTorch 一樣把每個 log 限制在 −100 以上，max(ln p, −100)
bce-hint = 對每個元素取 −mean(y·ln p + (1 − y)·ln(1 − p))
cross-entropy-extreme-hint = e^1000 會溢位成無限大：取指數之前，先把每一列減掉該列最大的 logit（log-sum-exp）
cross-entropy-hint = 對每一列取 ln Σ e^logit − logit[label] 的平均
loss-grad-sign-hint = 梯度的正負號反了：它指向上坡（對這些損失函式，梯度是 prediction − target，不是 target − prediction）
loss-grad-n-hint = 梯度大了 N 倍：損失是平均值，所以要除以 N
cross-entropy-grad-extreme-hint = e^1000 會溢位成無限大：取指數之前，先把每一列減掉該列最大的 logit
bce-grad-extreme-hint = 當 p 剛好是 0 或 1 時，p(1 − p) 是 0：請除以 max(p(1 − p), 1e−12)
bce-grad-hint = (p − y) / (p(1 − p)) / N，逐元素計算
cross-entropy-grad-hint = (softmax(row) − one-hot(label)) / batch，逐列計算
loss-central-differences-hint = 這和損失函式的中央差分結果不一致

## 模型（judge.rs）

zero-grad-reason = { $function }::zero_grad 之後 layer{ $layer } 還留著梯度
zero-grad-details = 呼叫 `{ $function }::zero_grad` 之後，layer{ $layer } 的權重或偏差梯度不是全部為零。
zero-grad-hint = zero_grad 必須把兩層的兩種梯度都歸零
zero-grad-linear-reason = Linear::zero_grad 沒有清除梯度（{ $case }）
zero-grad-linear-details = 在 `backward` 之後，`Linear::zero_grad` 必須讓 weight_grad 和 bias_grad 全部為零、形狀不變，weight 和 bias 保持原樣：{ $what }。
zero-grad-linear-bias = bias_grad 不全為零（weight 的梯度是）
zero-grad-linear-weight = weight_grad 不全為零（bias 的梯度是）
zero-grad-linear-both = 兩個梯度都不全為零
zero-grad-linear-parameters = 梯度是零，但 weight 或 bias 被改動了
zero-grad-linear-hint = 把兩個梯度都填成 0（`self.weight_grad.fill(0.0); self.bias_grad.fill(0.0);`），不要動參數
predict-count-reason = { $function } 的預測數量不對（{ $case }）
predict-count-details = `{ $function }` 對 { $rows } 列回傳了 { $got } 個預測：x 的每一列一個類別。
predict-wrong-reason = { $function } 預測了錯的類別（{ $case }）
predict-wrong-details = 第 { $row } 列：`{ $function }` 給出類別 { $got }，但你的模型自己對這一列的輸出 { $output } 表示應該是 { $expected }。
predict-simple-nn-hint = SimpleNN 在機率 model(x) 大於 0.5 時預測 1，否則預測 0：`(model(x) > 0.5)`
predict-mlp-hint = MLP 對每一列預測其最大 logit 的索引（`torch.argmax(model(x), dim=1)`：在一列的 10 個欄之間取，而不是沿著一欄往下取）
model-loss-hint = 模型的損失是它輸出的平均 BCE（SimpleNN）或交叉熵（Mlp）
gradient-of = layer{ $layer }.{ $parameter } 的梯度

## 最佳化器與批次（judge.rs）

adam-no-correction-hint = 這是沒有偏差修正的 Adam：把 m 除以 (1 − β1^t)、v 除以 (1 − β2^t)，t 是到目前為止走過的步數（第一步是 1）
adam-stuck-counter-hint = 步數計數器 t 沒有前進：每一步開始時把 t 加 1
adam-swapped-betas-hint = β1 和 β2 對調了：一階動差 m 用 β1 = 0.9 平均，二階動差 v（g² 的平均）用 β2 = 0.999
adam-counter-per-layer-hint = 步數計數器 t 每一層加一次，而不是每一步加一次：在 `step` 開頭、逐層迴圈之前把 t 加 1，讓同一步的每個張量都用同一個 t
adam-hint = m = β1·m + (1 − β1)·g；v = β2·v + (1 − β2)·g²；p −= lr·m̂ / (√v̂ + ε)，每個張量的 m 和 v 要在步與步之間保留
sgd-hint = 對每個權重和偏差做 p −= lr · grad
after-step-reason = 第 { $step } 步之後{ $reason }
after-step-details = 共 { $steps } 步中的第 { $step } 步之後：{ $details }
not-a-split-reason = 不是 0..n 的分割{ $case }
not-a-split-details = `batches({ $n }, { $size }, rng)`，第 { $call } 次呼叫：{ $why }。
not-a-split-hint = 把 0..n 的 Vec 打亂，再切成大小為 batch_size 的區塊（`chunks`）
not-shuffled-reason = 沒有打亂{ $case }
not-shuffled-details = `batches({ $n }, { $size }, rng)` 保持 0, 1, 2, … 的順序：設定 shuffle=True 的 DataLoader 每個 epoch 都會抽一個新的隨機順序。
not-shuffled-hint = 把索引切成批次之前先打亂（用 rng 做 Fisher–Yates 洗牌）
same-order-reason = 每個 epoch 的順序都一樣{ $case }
same-order-details = 對同一個亂數產生器呼叫兩次，得到相同的順序：每個 epoch 都必須重新打亂。
same-order-hint = 從傳入的 rng 抽樣（每抽一次它都會前進），不要用固定種子的新亂數產生器
order-not-reproducible-details = 種子相同的亂數產生器給出了不同的順序：順序只能來自 rng 參數，這樣同一個種子每次都會得到相同的執行結果。
order-from-rng-hint = 每個亂數都從 rng 參數抽樣

## 一個 epoch 與準確率（judge.rs）

epoch-nan-reason = 第 { $batch } 個批次（共 { $batches } 個）之後出現 NaN 或無限大
epoch-nan-details = `{ $function }`：在第 { $batch } 個批次（共 { $batches } 個）之後，損失或某個參數不再是數字（之前的批次都正常）。
epoch-nan-hint = 請檢查那個批次的損失和它的梯度：對 0 取 log、除以 0，或是不斷變大的步伐（梯度從沒歸零）
mean-loss-summed-hint = 各批次的損失加總了，但沒有除以批次數
mean-loss-per-example-hint = 每個批次的損失被每筆樣本各算了一次：每個批次只加一次 model.loss，再除以批次數
mean-loss-hint = 把每個批次 model.loss 傳回的值加起來，再除以批次數
mean-loss-reason = 平均損失不對：是預期的 { $ratio }×
mean-loss-details = `{ $function }` 訓練得正確（參數和參考答案一致），但傳回的平均損失是 { $loss }，應該是 { $expected }：是預期的 { $ratio }×。
epoch-off-reason = 一個 epoch 之後參數偏離了參考答案
epoch-off-details = 從評分程式給的起點和批次順序開始，`{ $function }` 結束時和參考答案的參數差了移動距離的 { $typical }（取隱藏單元的中位數；全部一起算是 { $all }）。{ $detail }
epoch-off-hint = 每個批次依序做：zero_grad、forward、loss、backward、最佳化器的一步（評分程式用它自己的模型和最佳化器執行你的迴圈，所以出錯的是迴圈）
accuracy-wrong-reason = 傳回 { $got }，應該是 { $expected }
accuracy-wrong-details = `accuracy` 在 { $examples } 筆樣本上傳回 { $got }；預測正確的比例是 { $expected }。
accuracy-wrong-hint = 預測類別（SimpleNN 是 p > 0.5，Mlp 是最大的 logit）等於標籤的列所占的比例（0 到 1）
fault-no-zero-grad = 梯度從沒歸零，所以會一個批次接一個批次地累積
fault-no-zero-grad-hint = 每個批次開始時呼叫 model.zero_grad()
fault-step-before-backward = 最佳化器在 backward 之前就走了一步，所以每一步用的都是上一個批次的梯度
fault-step-before-backward-hint = 順序是 zero_grad、forward、loss、backward、step
fault-adam = Adam 沒有做偏差修正
fault-adam-hint = 把 m 除以 (1 − β1^t)、v 除以 (1 − β2^t)
fault-sum-loss = 損失是對整個批次加總，而不是取平均
fault-sum-loss-hint = 損失（以及它的梯度）是批次的平均；epoch 的損失是各批次損失的平均
loop-wrong-reason = 迴圈不對：{ $what }
loop-wrong-details = 從評分程式給的起點和批次順序開始，`{ $function }` 沒有照參考的迴圈執行；它符合的是這樣的迴圈：{ $what }。
forward-is-hint = forward 是 { $head }

## train（same_run.rs）

train-count-reason = { $epochs } 個 epoch 卻有 { $got } 個損失
train-count-details = `train` 傳回了 { $got } 個損失；它必須每個 epoch 傳回一個（{ $epochs } 個）。
train-count-hint = 把每個 epoch 的平均損失 push 進去
train-seed-reason = 相同的種子給出了不同的數字
train-seed-details = 用相同的種子再執行一次 `train`，第一個 epoch 的損失是 { $again }，而不是 { $first }：同一個種子每次都必須給出相同的數字。
train-seed-hint = 每個亂數（每個 epoch 的批次）都從 rng 參數抽樣
train-written-out = 每個 epoch 先呼叫 `batches(n, batch_size, rng)`，再依那個順序呼叫 `train_epoch`
train-idle-reason = 依賴 batches 和 train_epoch，而它們還不會訓練
train-idle-details = `train` 是拿來和「{ $written_out }」從相同起點和種子得到的結果比較，而那樣做讓每個參數都停在原地：要等 `batches` 和 `train_epoch` 會訓練之後，這個項目才能檢查你跨 epoch 的迴圈。
train-idle-hint = 先讓 `batches` 和 `train_epoch` 這兩個項目通過
train-different-reason = 各 epoch 的結果和每個 epoch 做 batches + train_epoch 的不同
train-different-details = `train` 應該得到和「{ $written_out }」相同的結果，用相同的模型、最佳化器和 rng；{ $how }。
train-different-hint = 在每個 epoch 開始時（不是只有一次）用 batches(n, batch_size, rng) 產生新的順序，每次 train_epoch 都傳入同一個最佳化器，而且剛好執行 `epochs` 個 epoch
train-loss-reason = 第 { $epoch } 個 epoch 的損失是 { $got }，應該是 { $expected }
train-loss-details = `train` 訓練得正確，但第 { $epoch } 個 epoch 傳回了 { $got }；train_epoch 對它傳回的是 { $expected }。全部的值：{ $all }。
train-loss-hint = 依序把每次 train_epoch 傳回的損失 push 進去
train-right = 用 train_epoch 跑了 { $epochs } 個 epoch、每個 epoch 都用新的批次，用相同種子再跑一次也相同；損失 { $first } → { $last }，在 { $held_out } 筆保留的樣本上正確率 { $accuracy }%

## train_on 的兩個分支（same_run.rs）

same-run-shapes = 傳回的層形狀不同
same-run-differ = 參數不同
same-run-distance = 參數最後和那次執行留下的位置差了 { $distance }（相對於那次執行讓參數移動的距離，取隱藏單元的中位數）
fallback-path = `train_epoch(model, &mut Sgd {"{"} lr: { $lr } {"}"}, …)`
fallback-pieces = `train_epoch` 和 `Sgd::step`
fallback-first = 先讓 `train_epoch` 和 `sgd` 這兩個項目通過
fallback-reason = CPU 分支的訓練結果和用 Sgd 執行 train_epoch 的不同
fallback-hint = 在 Device::Cpu 分支傳回 crate::train_epoch(model, &mut Sgd {"{"} lr {"}"}, x, labels, batches)：不用 GPU，用相同的批次和學習率
place-cpu = 在 CPU 上
train-on-gpu-path = `GpuModel::to_device`、`to_device`、`DeviceDataLoader`、`train_epoch_gpu` 和 `GpuModel::to_host`
train-on-gpu-first = 先讓 `gpu_epoch_simple_nn` 和 `gpu_epoch_mlp` 這兩個項目通過
train-on-gpu-reason = GPU 分支的訓練結果和 train_epoch_gpu 的不同
train-on-gpu-hint = 在 Device::Gpu 分支裡：把模型和資料搬到 GPU，用一個走過相同批次的 loader，以相同的 lr 呼叫 train_epoch_gpu，最後用 to_host 寫回模型
place-gpu = 在 GPU 上
branch-idle-reason = 依賴 { $pieces }，而它們還不會訓練
branch-idle-details = `{ $call }` 是拿來和 { $path } 從相同起點得到的結果比較，而那樣做讓每個參數都停在原地：要等 { $pieces } 會訓練之後，這個項目才能檢查你的分支。
branch-different-details = `{ $call }` 應該得到和 { $path } 從相同起點得到的相同結果；{ $how }。
branch-loss-reason = 傳回的損失是 { $loss }，應該是 { $expected }
branch-loss-details = `{ $call }` 訓練得正確，但傳回的損失是 { $loss }；`{ $returns }` 傳回的是 { $expected }。
branch-loss-hint = 傳回 { $returns } 所傳回的平均損失
branch-right = { $place }，和 { $path } 得到的結果相同（{ $batches } 個批次，平均損失 { $loss }）

## 批次的分割（reference.rs）

partition-size = 第 { $batch } 個批次有 { $len } 筆樣本；除了最後一個批次，每個批次都必須剛好有 { $size } 筆，最後一個則要有 1 到 { $size } 筆
partition-out-of-range = 第 { $batch } 個批次裡有索引 { $index }，但總共只有 { $n } 筆樣本
partition-twice = 索引 { $index } 出現了兩次（第二次在第 { $batch } 個批次）
partition-missing = 索引 { $index } 不在任何批次裡：每個 epoch 每筆樣本都必須剛好用到一次

## GPU 項目，評分端（gpu_judge.rs）

untraced-note = {" "}（評分程式無法追蹤這張 GPU 上的呼叫，所以沒有計算 kernel 啟動次數，也沒有查看數值從哪裡來；模擬器也會檢查這些。）
transfer-layers-reason = { $model }：傳回了 { $count } 層，應該是 2 層
transfer-layers-details = `to_host` 傳回了 { $model } 的 { $count } 層；它有兩層。
transfer-layers-hint = 把兩層都依序複製回來
transfer-shape-reason = { $model }：{ $name } 傳回來是 { $got }，應該是 { $expected }
transfer-shape-details = 經過 `GpuModel::to_device` 和 `to_host` 之後，{ $model } 的 { $name } 形狀是 { $got }；它送到 GPU 時是 { $expected }。
transfer-shape-hint = 完整地複製每個張量，並保留層的形狀（outputs × inputs）
transfer-value-reason = { $model }：{ $name } 在來回途中變了：[{ $i }, { $j }] 是 { $got }，應該是 { $expected }
transfer-value-details = 經過 `GpuModel::to_device` 和 `to_host` 之後，{ $model } 的 { $name }[{ $i }, { $j }] 是 { $got }；它送到 GPU 時是 { $expected }。來回一趟必須逐位元傳回每個值。
transfer-grad-hint = 梯度也要複製（`model.to(device)` 會搬動層的每個張量），去程和回程都要
transfer-value-hint = 把每個張量複製到它自己的緩衝區，再用相同的 row-major 順序複製回來
transfer-not-back-reason = { $model }：有 { $missing } 個值從沒從 GPU 複製回來
transfer-not-back-details = `to_host` 傳回了 { $model } 的值，但其中 { $missing } 個從沒從 GPU 複製回來：它們來自留在主機上的複本。
transfer-not-back-hint = `to_host` 必須從裝置讀回每個張量（`stream.clone_dtoh(&slice)`），這樣傳回的才是 GPU 算出來的值
transfer-right = SimpleNN 和 Mlp 送到 GPU 再傳回來，逐位元相同，而且是從裝置記憶體讀回的
loader-count-reason = { $got } 個批次，應該是 { $expected } 個{ $case }
loader-count-details = `DeviceDataLoader`（它的 `next`）產生了 { $got } 個批次{ $case }；它拿到的是 { $expected } 個（評分程式給的批次順序）。
loader-count-hint = 每一組索引產生一個批次，依照給定的順序
loader-shape-reason = 第 { $batch } 個批次是 { $got }，應該是 { $expected }{ $case }
loader-shape-details = `DeviceDataLoader` 的第 { $batch } 個批次{ $case }有 { $rows }×{ $cols } 個值；它應該有 { $examples } 筆樣本，每筆 { $inputs } 個輸入。
loader-shape-hint = 批次的 `x` 是 len × cols、row-major，`len` 是這個批次裡的索引個數
loader-row-reason = 第 { $batch } 個批次的第 { $row } 列不是第 { $index } 筆樣本{ $case }
loader-row-details = `DeviceDataLoader` 的第 { $batch } 個批次{ $case }的第 { $row } 列應該是資料集的第 { $index } 筆樣本（批次裡的第 { $row } 個索引），但它裝的是其他的值。
loader-row-hint = 批次的第 r 列是資料集的第 `batch[r]` 列：照批次裡索引的順序收集各列
loader-labels-reason = 第 { $batch } 個批次：從第 { $row } 列開始標籤不對{ $case }
loader-labels-details = `DeviceDataLoader` 的第 { $batch } 個批次{ $case }的標籤從第 { $row } 列開始不同：應該是 { $expected }，得到的是 { $got }。
loader-labels-hint = 用和各列相同的索引收集標籤
loader-right = { $cases } 個案例的每個批次都帶著正確的列和標籤送到了 GPU
on-device-details = `{ $function }`：{ $what }
on-device-hint = 每一步都必須在 GPU 上執行：乘積用 cuBLAS 在裝置緩衝區上計算，其他的都在你的 kernel 裡做，而且 `GpuModel::train_step` 裡不能和主機之間複製任何東西
moved-reason = 在 epoch 中參數在主機和 GPU 之間搬來搬去
moved-details = 在一個 { $batches } 個批次的 epoch 中，有 { $uploaded } 位元組複製到 GPU、{ $copied_back } 位元組複製回主機；批次本身只有 { $batch_bytes } 位元組，而除了損失之外什麼都不需要傳回來。參數經過了主機。
host-computed-reason = 參數是在主機上算出來的
host-computed-details = 這個 epoch 改變的 { $changed } 個參數中，有 { $uploaded } 個的值是在 epoch 中從主機複製上去的：它們是在 CPU 上算的，不是在 GPU 上。
not-from-the-data-reason = 這些參數不是 GPU 從資料訓練出來的
not-from-the-data-details = `{ $function }` 傳回了正確的參數，但評分程式把這個 epoch 在裝置上的工作換成其他輸入值再跑一次時，{ $why } 在 CPU 上訓練、只是經過 GPU 的參數，輸入改變時不會跟著變；在裝置上從資料訓練出來的參數會跟著輸入變。
not-from-the-data-hint = 在 GPU 上訓練：每一步的乘積用 cuBLAS，其餘在你的 kernel 裡，用載入器在裝置上收集好的批次
epoch-replay-differs = 參數沒有跟著變：它們離用那些值訓練會到達的地方很遠。
epoch-replay-faulted = 有 kernel 當掉了：你的 kernel 是不是從輸入值讀取了索引或長度？
not-back-reason = 有 { $missing } 個值從沒從 GPU 複製回來
epoch-not-back-details = epoch 結束後 `to_host` 傳回的值中，有 { $missing } 個從沒從 GPU 複製回來：它們來自留在主機上的複本。
epoch-not-back-hint = 在 GPU 上訓練參數，再用 `stream.clone_dtoh` 讀回來
few-blas-reason = { $batches } 個批次只有 { $blas } 次 cuBLAS 呼叫
few-blas-details = 一個 { $batches } 個批次的 epoch 做了 { $blas } 次 cuBLAS 呼叫和 { $launches } 次 kernel 啟動。每一步的矩陣乘積都必須在 GPU 上透過 cuBLAS（`blas.gemm`）計算。
few-launches-reason = { $batches } 個批次只有 { $launches } 次 kernel 啟動
few-launches-details = 一個 { $batches } 個批次的 epoch 啟動了 { $launches } 個 kernel。偏差、激活函式、損失的梯度和更新都應該在你自己的 CUDA kernel 裡做。
branch-not-gpu-reason = GPU 分支為 { $batches } 個批次做了 { $blas } 次 cuBLAS 呼叫和 { $launches } 次啟動
branch-not-gpu-details = 使用 `Device::Gpu` 的 `train_on` 以 { $blas } 次 cuBLAS 呼叫和 { $launches } 次 kernel 啟動訓練了 { $batches } 個批次：它沒有在 GPU 上訓練。
branch-not-gpu-hint = 在 `Device::Gpu` 分支裡，把模型和資料搬到 GPU，再用 `DeviceDataLoader` 呼叫 `train_epoch_gpu`
branch-not-back-details = 使用 `Device::Gpu` 執行 `train_on` 之後，模型有 { $missing } 個值從沒從 GPU 複製回來：模型裡還是 epoch 之前的參數。
branch-not-back-hint = GPU 分支最後要用 `GpuModel::to_host` 寫回 `model`
timer-loss-reason = 計時的 epoch 的損失是 { $loss }，應該是 { $expected }
timer-loss-details = 從評分程式給的參數開始、對 { $examples } 筆樣本跑一個 epoch，`{ $function }` 傳回的平均損失是 { $loss }；這個 epoch 的平均損失是 { $expected }。計時的 epoch 必須像 `train_epoch_gpu` 一樣訓練（並傳回它的損失）。
timer-work = 你的 epoch
timer-size = 對 { $examples } 筆樣本的一個 epoch
speed-wrong-reason = 有一個計時的 epoch 損失錯誤，所以速度不算分
speed-wrong-details = 在 784→{ $hidden }→10 的 MLP 上，`{ $function }` 有一個計時的 epoch 傳回的平均損失是 { $loss }；評分程式從相同起點在 CPU 上跑的 epoch 得到 { $expected }。只有正確的 epoch 才能拿速度分數。
speedup-reason = CPU 的 { $speedup }×
speedup-details = 透過 `{ $function }` 在 784→{ $hidden }→10 的 MLP 上對 { $examples } 張數字圖片、每批 { $batch } 張跑一個 SGD epoch（模型和資料已經在 GPU 上），速度是評分程式 CPU epoch（ndarray，單執行緒）的 { $speedup }×，這是 { $samples } 組成對樣本的中位數，用評分程式的時鐘計時，前後都等 GPU 清空。如果這個數字偏低，請讓所有東西在步與步之間都留在 GPU 上：不要複製回來，也不要在迴圈裡同步。

## GPU 項目，工作程序端（gpu.rs）

gpu-unexpected-report = GPU epoch 傳回了意料之外的報告
gpu-setup-failed = 評分程式的 GPU 設定失敗：{ $error }
gpu-error-after = `{ $function }` 執行之後 GPU 回報了錯誤：{ $error }。讀寫超出緩衝區的 kernel 會讓之後所有的 GPU 呼叫都失敗；請在你的函式裡同步並檢查結果，就能在那裡看到錯誤
timing-event-missing = 少了一個計時事件
timed-call-not-marked = 測試程式沒有標記計時的呼叫

## 讀取 MNIST 的 IDX 檔（data.rs）

idx-io = { $path }：無法讀取檔案：{ $error }：請檢查路徑
idx-short-header = { $path }：檔案在第 { $len } 個位元組就結束了，還在它 { $header } 位元組的標頭裡：下載不完整
idx-magic = { $path }：第 { $offset } 個位元組是 0x{ $found }，不是 0x00：IDX 檔以兩個零位元組開頭；這是 MNIST 的 IDX 檔嗎（.gz 檔必須先解壓縮）？
idx-data-type = { $path }：第 2 個位元組：資料型別是 0x{ $found }，不是 0x08（無號位元組）：這是 MNIST 的 IDX 檔嗎？
idx-dimensions-images = { $path }：第 3 個位元組：維度數是 { $found }，不是 { $expected }：這是 MNIST 的影像檔嗎（影像有 3 個維度，標籤有 1 個）？
idx-dimensions-labels = { $path }：第 3 個位元組：維度數是 { $found }，不是 { $expected }：這是 MNIST 的標籤檔嗎（影像有 3 個維度，標籤有 1 個）？
idx-truncated = { $path }：檔案在第 { $len } 個位元組就結束了，但它的標頭說有 { $promised } 個位元組：下載不完整
idx-extra-bytes = { $path }：第 { $promised } 個位元組：標頭描述的是 { $promised } 個位元組，但檔案一直到第 { $len } 個位元組：這是正確的檔案嗎，還是檔案損壞了？
idx-label = { $path }：第 { $offset } 個位元組：標籤 { $label } 不是 0-9 的數字：這是 MNIST 的標籤檔嗎？
idx-count-mismatch = { $images }（第 4 個位元組）有 { $image_count } 張影像，但 { $labels }（第 4 個位元組）有 { $label_count } 個標籤：請使用同一個分割（train 或 t10k）的影像檔和標籤檔

## 測試程式（實驗的 tests/grade.rs）

layers-mut-two = { $model }::layers_mut 必須依序傳回模型的兩層
forward-shape = { $model }::forward 對 { $batch } 筆的批次回傳了 { $rows }×{ $cols } 的輸出：必須是 { $batch }×{ $classes }（每個樣本一列）

## GPU epoch：評分程式在裝置上量到的結果（gpu_judge/epoch.rs）

gpu-epoch-nan-reason = GPU 上的 epoch 之後出現 NaN 或無限大
gpu-epoch-nan-details = `{ $function }` 在 GPU 上傳回的平均損失是 { $loss }，而且有些參數不是數字。
gpu-epoch-nan-hint = 檢查 kernel 裡有沒有對 0 取 log（要截在 -100）、除以 0，或讀到緩衝區結尾之外（每個 kernel 都要跳過 i >= n 的執行緒）
gpu-loss-details = `{ $function }` 在 GPU 上訓練正確（參數和參考答案一致），但傳回的平均損失是 { $loss }，預期 { $expected }：是預期的 { $ratio }×。
gpu-loss-summed-hint = 各批次的損失在裝置上加總了，卻沒有除以批次數：最後把 loss_sum 複製回來一次，再除以批次數
gpu-loss-per-row-hint = 每一列的執行緒要把 row_loss / N（批次的平均）加到 loss_sum，而不是 row_loss
gpu-loss-hint = 每一步把該批次的平均損失加到 GPU 上唯一的 f32 loss_sum；最後複製回來一次，再除以批次數
gpu-epoch-off-reason = 在 GPU 上，{ $name } 的移動不對
gpu-epoch-off-details = `{ $function }` 從評分程式給的起點和批次順序開始，最後離參考答案的參數有移動距離的 { $typical }（取隱藏單元的中位數；全部參數合起來是 { $all }）。{ $measured }
gpu-measured = {" "}在裝置上量到（{ $over }）：{ $name } 離參考答案差了它移動距離的 { $off }，沿參考方向移動了 { $scale }× 的距離。
gpu-over-epoch = 整個 epoch
gpu-over-batch = 只看第 { $batch } 個批次（共 { $batches } 個；從相同參數出發，這是 GPU 的一步和你的 CPU epoch（train_epoch 配 Sgd）第一次不同的批次）
gpu-some-parameter = 某個參數
gpu-epoch-off-hint = 這裡 GPU 的一步就是模型：照模組說明逐一檢查 train_step 的每個 kernel 和 cuBLAS 乘積
gpu-hint-per-row = 每個參數都多走了 { $rows }×（批次的列數）：損失 kernel 的梯度要除以批次的列數，(p − y) / N
gpu-hint-left-over = 第 { $batch } 個批次的一步受到之前批次的影響：每次 train_step 一開始要把四個梯度歸零（stream.memset_zeros），也不要讓 kernel 加到上一步填過的緩衝區上
gpu-hint-bias = 檢查讀寫 { $name } 的 kernel：偏差要依欄加上（bias[i % cols]，i = 列 × cols + 欄），它的梯度是輸出梯度每一欄的總和，每欄一個執行緒
gpu-hint-weight = 照模組說明檢查使用和計算 { $name } 的 cuBLAS 乘積（m、n、k、leading dimension、轉置、beta），以及提供它們輸入的 kernel
gpu-per-row-reason = 在 GPU 上，每一步都大了 { $rows }×
gpu-left-over-reason = 在 GPU 上，第 { $batch } 個批次的一步受到之前批次的影響
epoch-fails-reason = 這裡不扣分：train_epoch_gpu 自己就會失敗
epoch-fails-details = `{ $function }` 在 GPU 上傳回錯誤（{ $error }）。它所執行的 `train_epoch_gpu` 在新的行程裡單獨執行也會失敗（{ $own }）；這個錯誤由 GPU epoch 的項目（gpu_epoch_simple_nn、gpu_epoch_mlp）扣分，只扣一次。等 epoch 能執行後，這個項目才會檢查。
